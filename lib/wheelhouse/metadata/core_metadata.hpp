#pragma once
// Core metadata (packaging.python.org "Core metadata specifications"): the METADATA file of a
// wheel, RFC 822-style headers with continuation lines, then the description as the body.

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "wheelhouse/result.hpp"

namespace wheelhouse::metadata {

struct core_metadata {
    // Every header in the order written, names as written, continuation lines unfolded.
    std::vector<std::pair<std::string, std::string>> fields;
    std::string description;  // the body after the blank line (or the Description header)

    // First value of a field, by case-insensitive name.
    std::optional<std::string_view> get(std::string_view field) const;
    // Every value of a multi-use field (Requires-Dist, Classifier, Project-URL, ...).
    std::vector<std::string_view> get_all(std::string_view field) const;

    std::string_view name() const { return get("Name").value_or(""); }
    std::string_view version() const { return get("Version").value_or(""); }
    std::string_view metadata_version() const { return get("Metadata-Version").value_or(""); }
    std::optional<std::string_view> summary() const { return get("Summary"); }
    std::optional<std::string_view> requires_python() const { return get("Requires-Python"); }
};

// Refuses text that is not UTF-8, has no Metadata-Version, Name or Version, or whose header
// lines are malformed; the error names the line.
result<core_metadata> parse_core_metadata(std::string_view text);

}  // namespace wheelhouse::metadata
