#pragma once
// What a download of /files/<sha256>/<filename> asks the catalog: the file's row and whether its
// project is quarantined. Two queries per request were most of a download's cost (a 302 to a
// bucket or GitHub, a small file): they are kept here, and dropped whenever the catalog changes
// (the catalog's change listener, and the poll for other processes' writes), so no answer is
// older than the catalog's last commit. A lookup that raced a change is not kept.
//
// Thread safety: every member may be called from any thread.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <unordered_map>

#include "wheelhouse/catalog/catalog.hpp"
#include "wheelhouse/result.hpp"

namespace wheelhouse::app {

struct file_lookup {
    catalog::file_record file;
    bool quarantined = false;  // its project's files are not offered
};

class file_lookups {
public:
    explicit file_lookups(std::size_t max_entries = 1u << 16) : max_entries_(max_entries) {}

    // The row of `filename` whose bytes are `sha256`; null when there is none (not kept: an
    // upstream file's lookup goes on elsewhere).
    result<std::shared_ptr<const file_lookup>> find(const catalog::catalog& catalog, std::string_view sha256,
                                                    std::string_view filename);
    void clear();

private:
    const std::size_t max_entries_;
    mutable std::shared_mutex mutex_;
    std::unordered_map<std::string, std::shared_ptr<const file_lookup>> entries_;
    std::uint64_t generation_ = 0;  // bumped by clear(): a lookup begun before is not kept
};

}  // namespace wheelhouse::app
