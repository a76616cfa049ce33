#pragma once
// The admin catalog's project list: a search by name, sorted and paginated in SQL so that a
// page of 50 out of 10,000 projects costs one indexed query, not a walk of the whole catalog.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "wheelhouse/catalog/catalog.hpp"
#include "wheelhouse/catalog/project_filter.hpp"
#include "wheelhouse/result.hpp"

namespace wheelhouse::catalog {

enum class project_sort {
    name,    // A to Z
    recent,  // last upload first
    files,   // most files first
    size,    // most bytes first
};

std::string_view to_string(project_sort sort) noexcept;
// "name", "recent", "files" or "size"; invalid otherwise, naming the four.
result<project_sort> parse_project_sort(std::string_view text);

// What someone typed in the search box, folded the way PEP 503 folds names (lower case, runs
// of '-', '_', '.' and spaces to one '-'), so "Flash_Attn" finds "flash-attn". Outer
// separators are dropped: "flash_" still finds "flash-attn".
std::string normalize_search(std::string_view typed);

struct project_query {
    std::string search;  // matched anywhere in the normalised name; empty: every project
    project_filter visible;  // only these projects are counted and listed (a limited token's)
    project_sort sort = project_sort::name;
    std::int64_t page = 1;      // from 1
    std::int64_t per_page = 50;
};
inline constexpr std::int64_t max_per_page = 200;

struct project_summary {
    project_record project;
    std::int64_t file_count = 0;
    std::uint64_t total_size = 0;
    std::int64_t last_upload_ms = 0;  // 0 without files
    // The newest release in PEP 440 order, without a local label, among files not yanked
    // (among all files when every one is yanked); empty without files.
    std::string latest_version;
};

struct project_page {
    std::vector<project_summary> projects;
    std::int64_t total = 0;  // projects matching the search, on every page
};

// invalid for a page below 1 or per_page outside 1..max_per_page. Thread safety: any thread.
result<project_page> search_projects(const catalog& catalog, const project_query& query);

// The newest release (local label dropped) of these normalised versions, yanked ones only
// when nothing else is there. Pure; exposed for its tests.
struct version_seen {
    std::string normalized_version;
    bool yanked = false;
};
std::string latest_release(const std::vector<version_seen>& versions);

}  // namespace wheelhouse::catalog
