#pragma once
// What one index of simple pages shows, from catalog rows: the project list every index shares,
// and a project's files in /simple/ (all) or in a variant index (those its selector lists).
// The server's routes and the static export both go through here, so they publish the same pages.

#include <optional>
#include <span>
#include <vector>

#include "wheelhouse/catalog/catalog.hpp"
#include "wheelhouse/render/simple_pages.hpp"
#include "wheelhouse/variants/selector.hpp"

namespace wheelhouse::render {

// The links of the project list, in the catalog's order (by normalised name).
std::vector<project_listing> project_listings(std::span<const catalog::project_listing> projects);

// `files` as the index of `selector` lists them (catalog::listed_files), or all of them for
// /simple/ (no selector); in the order given.
std::vector<catalog::file_record> index_files(std::vector<catalog::file_record> files,
                                              const std::optional<variants::selector>& selector);

// What a variant index's page of this project says to a person beside its links: that the
// project's sdists are left out and why, when index_files left any out; else empty.
std::string left_out_note(std::span<const catalog::file_record> all, std::span<const catalog::file_record> listed,
                          std::string_view project);

}  // namespace wheelhouse::render
