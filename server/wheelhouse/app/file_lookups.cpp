#include "wheelhouse/app/file_lookups.hpp"

#include <mutex>

namespace wheelhouse::app {

result<std::shared_ptr<const file_lookup>> file_lookups::find(const catalog::catalog& catalog, std::string_view sha256,
                                                              std::string_view filename) {
    std::string key;
    key.reserve(sha256.size() + 1 + filename.size());
    key.append(sha256).append("/").append(filename);
    std::uint64_t began = 0;
    {
        std::shared_lock lock(mutex_);
        if (const auto found = entries_.find(key); found != entries_.end()) return found->second;
        began = generation_;
    }
    auto row = catalog.find_file(sha256, filename);
    if (!row) return row.error();
    if (!*row) return std::shared_ptr<const file_lookup>();
    auto project = catalog.find_project((*row)->project);
    if (!project) return project.error();
    auto looked_up = std::make_shared<const file_lookup>(
        file_lookup{std::move(**row), *project && (*project)->status == catalog::project_status::quarantined});
    std::unique_lock lock(mutex_);
    if (generation_ == began) {
        if (entries_.size() >= max_entries_) entries_.clear();  // a bound, not an LRU: rows are cheap to read again
        entries_.emplace(std::move(key), looked_up);
    }
    return looked_up;
}

void file_lookups::clear() {
    std::unique_lock lock(mutex_);
    entries_.clear();
    ++generation_;
}

}  // namespace wheelhouse::app
