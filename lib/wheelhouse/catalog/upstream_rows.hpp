#pragma once
// The catalog's tables for upstream indexes (schema/0010_upstream.sql): reserved names, and
// the upstream files kept in the blob store. Thread safety: as catalog's; each call is one
// transaction or one read snapshot.

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "wheelhouse/catalog/catalog.hpp"
#include "wheelhouse/catalog/upstream_records.hpp"
#include "wheelhouse/result.hpp"

namespace wheelhouse::catalog {

// What the catalog says of a name an upstream might serve, read in one snapshot; whether that
// makes it owned is upstream::source_of's to say.
struct name_facts {
    bool known_locally = false;               // a project of this index (it has files, or had)
    std::vector<std::string> reserved_patterns;  // every reservation
};
result<name_facts> facts_of_name(const catalog& catalog, std::string_view project);

// Every reservation, by pattern.
result<std::vector<reservation>> list_reservations(const catalog& catalog);
// Adds `pattern` (normalised by the caller); false when it was reserved already. Audited.
result<bool> reserve_name(catalog& catalog, std::string_view pattern, const std::optional<std::string>& reason,
                          std::string_view actor);
// Removes it; false when there was no such reservation. Audited.
result<bool> release_name(catalog& catalog, std::string_view pattern, std::string_view actor);

result<std::optional<kept_upstream_file>> find_kept_file(const catalog& catalog, std::string_view sha256,
                                                          std::string_view filename);
// Records that the file's bytes are in the blob store now (`file.size` set), or its .metadata
// (`file.metadata_sha256` set), keeping what the row said of the other.
result<void> record_kept_file(catalog& catalog, const kept_upstream_file& file);

struct kept_totals {
    std::uint64_t files = 0;           // rows whose file is kept
    std::uint64_t bytes = 0;           // their sizes
    std::uint64_t metadata_files = 0;  // rows whose .metadata is kept
};
result<kept_totals> count_kept_files(const catalog& catalog);

// What is kept per upstream project, by project.
struct kept_project {
    std::string project;
    std::string upstream;  // the last one a file of it came from
    kept_totals kept;
};
result<std::vector<kept_project>> list_kept_projects(const catalog& catalog);

// Rows kept before `kept_before_ms` (every row with INT64_MAX), of `project` when it is given:
// each row is deleted, then its blob and .metadata released (catalog::release_blob) unless
// another row uses them. Returns the rows dropped.
result<std::vector<kept_upstream_file>> drop_kept_files(catalog& catalog, std::int64_t kept_before_ms,
                                                         const std::optional<std::string>& project,
                                                         const std::function<result<void>(std::string_view sha256)>& remove_blob);

}  // namespace wheelhouse::catalog
