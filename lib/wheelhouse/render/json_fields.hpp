#pragma once
// The fields the admin JSON views share.
//
// file_json(): what every view of one file shows (the file's page and the variant matrix's
// builds each add their own around it):
// {"filename", "packagetype", "python_tag", "abi_tag", "platform_tag", "build_tag" (null when none),
//  "variant" (variants::to_json), "pep825" (pep825_json), "sha256", "size",
//  "upload_time" (null when unknown), "requires_python" (null when none), "yanked" (false or the reason)}

#include <cstdint>
#include <optional>
#include <string>

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

#include "wheelhouse/catalog/records.hpp"

namespace wheelhouse::render {

// An ISO 8601 UTC time, null for 0 (never) or none.
boost::json::value time_or_null(std::int64_t unix_milliseconds);
boost::json::value time_or_null(const std::optional<std::int64_t>& unix_milliseconds);
// The text with U+FFFD for bytes that are not UTF-8, null for none.
boost::json::value text_or_null(const std::optional<std::string>& value);

boost::json::object file_json(const catalog::file_record& file);

// PEP 825: {"label": "cu128_sm90", "properties": ["nvidia :: sm_arch :: 90_real", ...]} for a
// variant wheel ("properties" [] for the null variant), null for any other file.
boost::json::value pep825_json(const catalog::file_record& file);

}  // namespace wheelhouse::render
