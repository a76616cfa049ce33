#pragma once
// The admin catalog's project list: a search by name, sorted and paginated in SQL so that a
// page of 50 out of 10,000 projects costs one indexed query, not a walk of the whole catalog.

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "wheelhouse/catalog/catalog.hpp"
#include "wheelhouse/catalog/project_filter.hpp"
#include "wheelhouse/result.hpp"
#include "wheelhouse/variants/selector.hpp"

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

// Which builds a project must have, or lack, to be listed: "which projects have a cu130 /
// sm120 / torch 2.10 build, and which lack one?" A build counts when it is made for every axis
// named (variants::made_for: a cu13 build counts for cu130, an sm90a build for sm90, a
// torch2.9.0andhigher build for torch2.10) and, with an interpreter, installs on it
// (installs_on_python). A kind alone asks "which projects ship an sdist, which have no wheel?".
struct build_filter {
    variants::selector wanted;          // the axes named: CUDA, ROCm, torch, SM
    std::optional<std::string> python;  // "cp312", "cp314t"
    std::optional<package_type> kind;   // only files of this kind count
    bool lacks = false;                 // list the projects without such a build instead

    bool active() const noexcept {
        return variants::speaks_to_machine(wanted.constraints) || python.has_value() || kind.has_value();
    }
};

// The project list's filter parameters as given, each one selector word or an interpreter.
struct build_filter_text {
    std::string_view cuda, torch, sm, rocm, python, kind;
    bool lacks = false;
};

// Each word may be spelled as the variant indexes take it ("cu130", "cuda13.0", "torch2.10",
// "sm120", "sm_120", "rocm6.4") or as a bare version ("13.0", "2.10", "12.0", "6.4"); python as
// "cp312", "cp314t", "3.12" or "3.14t". A torch is its family ("2.10.0" asks for torch2.10).
// kind is "wheel" or "sdist"; an sdist has no machine or interpreter, so kind=sdist stands alone.
// invalid names the parameter and what it takes; lacks without anything named is invalid too.
result<build_filter> parse_build_filter(const build_filter_text& text);

// Whether a wheel with these tags (compressed sets as written, "cp311.cp312") installs on the
// interpreter "cpXY" or free-threaded "cpXYt": a tag for it, an abi3 build for an earlier
// CPython 3 (not free-threaded), or a pure "py3" / "pyXY" wheel.
bool installs_on_python(std::string_view python_tags, std::string_view abi_tags, std::string_view interpreter);

struct project_query {
    std::string search;  // matched anywhere in the normalised name; empty: every project
    project_filter visible;  // only these projects are counted and listed (a limited token's)
    build_filter builds;     // only projects with (or without) such a build
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
// With a build filter, one pass over the visible projects' files finds who has such a build
// (a SQL query cannot say what variants::made_for says); counting and paging stay in SQL.
result<project_page> search_projects(const catalog& catalog, const project_query& query);

// The words the filters can take, as the visible projects' builds name them: CUDA ("cu128",
// "cu12"), torch (major.minor, "torch2.10"), GPU (compute capabilities, "sm90" for sm90a too),
// ROCm ("rocm6.4") and interpreters ("cp312", "cp314t"), each once. Thread safety: any thread.
struct build_words {
    std::set<std::string> cuda, torch, sm, rocm, python;
    std::set<std::string> kind;  // "sdist", "wheel": the kinds of file there are
};
result<build_words> words_of_builds(const catalog& catalog, const project_filter& visible);

// The newest release (local label dropped) of these normalised versions, yanked ones only
// when nothing else is there. Pure; exposed for its tests.
struct version_seen {
    std::string normalized_version;
    bool yanked = false;
};
std::string latest_release(const std::vector<version_seen>& versions);

}  // namespace wheelhouse::catalog
