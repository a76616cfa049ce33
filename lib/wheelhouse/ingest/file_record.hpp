#pragma once
// The catalog row of a validated wheel, made in one place so a file registered from a remote
// URL has exactly the row an upload of the same bytes would have, but for where it is served from.

#include <cstdint>
#include <optional>
#include <string>

#include "wheelhouse/catalog/records.hpp"
#include "wheelhouse/ingest/sdist_validation.hpp"
#include "wheelhouse/ingest/wheel_validation.hpp"
#include "wheelhouse/pep427/wheel_filename.hpp"

namespace wheelhouse::ingest {

// mode local, no remote_url; the caller sets those for a remote file.
catalog::file_record make_file_record(const pep427::wheel_filename& wheel, const validated_wheel& validated,
                                      std::string sha256, std::uint64_t size, std::optional<std::string> uploaded_by);

// An sdist's row: no wheel tags, no variant; PKG-INFO's digest only when it is served as core
// metadata (has_static_metadata), else metadata_sha256 is empty.
catalog::file_record make_file_record(const pep625::sdist_filename& sdist, const validated_sdist& validated,
                                      std::string sha256, std::uint64_t size, std::optional<std::string> uploaded_by);

}  // namespace wheelhouse::ingest
