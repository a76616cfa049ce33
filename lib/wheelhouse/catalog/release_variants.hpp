#pragma once
// PEP 825 in the catalog: the rules a variant wheel must keep with the other variant wheels of
// its release, and the release's {name}-{version}-variants.json, generated from their rows.
// Each function runs on the connection it is given, inside the caller's transaction: the file
// changes in the very commit that changes the wheels, so it is never stale.

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "wheelhouse/catalog/records.hpp"
#include "wheelhouse/result.hpp"
#include "wheelhouse/sqlite/connection.hpp"

namespace wheelhouse::catalog {

// A variant wheel's properties (file.variant_properties) as variant_properties rows of file.id,
// written in the transaction that adds its row; a file row goes with them on delete.
result<void> write_variant_properties(sqlite::connection& db, const file_record& file);
// Reads them back into file.variant_properties, in the map's order as the rows' key keeps it:
// no JSON to parse and nothing to sort on a read. Nothing to read for a file without a label.
result<void> read_variant_properties(sqlite::connection& db, file_record& file);

// Before `file` (a variant wheel) joins its release: its label, if already used there, must
// mean the same properties (else `conflict`, naming both files and both property sets), and
// its namespace priorities must merge with the release's (else `invalid`, naming both lists).
result<void> check_variant_fits(sqlite::connection& db, std::int64_t project_id, const file_record& file);

// Writes the release's variants.json from its variant wheels' rows, or removes it when none
// is left. Leaves the row alone when the content is unchanged.
result<void> rewrite_release_variants(sqlite::connection& db, std::int64_t project_id, std::string_view project,
                                      std::string_view normalized_version);

// Every variants.json of a project, by version.
result<std::vector<release_variants_file>> read_release_variants(sqlite::connection& db, std::string_view project);

// For /files/<sha256>/<filename>: both must match.
result<std::optional<release_variants_file>> find_release_variants(sqlite::connection& db, std::string_view sha256,
                                                                   std::string_view filename);

}  // namespace wheelhouse::catalog
