#include "wheelhouse/render/simple_index.hpp"

#include <algorithm>
#include <utility>

#include "wheelhouse/catalog/variant_view.hpp"

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
    for (const auto position : catalog::listed_files(files, *selector)) listed.push_back(std::move(files[position]));
    return listed;
}

std::string left_out_note(std::span<const catalog::file_record> all, std::span<const catalog::file_record> listed,
                          std::string_view project) {
    const auto sdists = [](std::span<const catalog::file_record> files) {
        return std::count_if(files.begin(), files.end(),
                             [](const auto& file) { return file.type == catalog::package_type::sdist; });
    };
    if (sdists(listed) == sdists(all)) return {};
    return "This variant index leaves out the sdists of " + std::string(project) +
           ": its builds carry variants, and where no build fits this machine pip would compile the sdist "
           "instead (for hours, or failing). /simple/" + std::string(project) + "/ lists them.";
}

}  // namespace wheelhouse::render
