#include "wheelhouse/render/simple_index.hpp"

#include <utility>

#include "wheelhouse/variants/variant_view.hpp"

namespace wheelhouse::render {

std::vector<project_listing> project_listings(std::span<const catalog::project_listing> projects) {
    std::vector<project_listing> listing;
    listing.reserve(projects.size());
    for (const auto& entry : projects) listing.push_back({entry.project.name, entry.project.display_name});
    return listing;
}

std::vector<catalog::file_record> index_files(std::vector<catalog::file_record> files,
                                              const std::optional<variants::selector>& selector) {
    if (!selector) return files;
    std::vector<catalog::file_record> listed;
    for (const auto position : variants::listed_files(files, *selector)) listed.push_back(std::move(files[position]));
    return listed;
}

}  // namespace wheelhouse::render
