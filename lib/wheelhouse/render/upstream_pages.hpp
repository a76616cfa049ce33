#pragma once
// An upstream's project page (upstream::project_page) as this index serves it: written by the
// same parts as its own pages (page_parts.hpp), with the upstream's yanks, requires-python,
// core-metadata hashes, sizes, upload times and PEP 792 status, in the upstream's order. It
// declares what its data supports: the upstream's api-version, or in JSON 1.0 when the page
// lacks what 1.1 makes mandatory there (versions, every file's size; an HTML upstream has neither).
// A quarantined project lists no files (PEP 792), as this index's own pages do.

#include <string>
#include <string_view>

#include "wheelhouse/upstream/project_page.hpp"

namespace wheelhouse::render {

struct upstream_links {
    // Links go to this index, files_base + "<sha256>/<filename>", which fetches, checks and
    // keeps the file; or, with link_upstream, to the upstream's URL as it is.
    std::string files_base = "/files/";
    bool link_upstream = false;
};

std::string upstream_file_url(const upstream::upstream_file& file, const upstream_links& links);

std::string upstream_page_html(const upstream::project_page& page, const upstream_links& links);
std::string upstream_page_json(const upstream::project_page& page, const upstream_links& links);

// The api-version upstream_page_json declares for `page`.
std::string_view json_api_version(const upstream::project_page& page) noexcept;

}  // namespace wheelhouse::render
