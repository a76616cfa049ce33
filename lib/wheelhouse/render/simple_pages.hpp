#pragma once
// The simple repository API pages (PEP 503 HTML, PEP 691 JSON) at api-version 1.4, with
// PEP 592 yanks, PEP 658/714 core metadata, PEP 700 sizes, times and versions, and PEP 792
// project status. Pure: the same rows always give the same bytes.

#include <span>
#include <string>
#include <string_view>

#include "wheelhouse/catalog/records.hpp"

namespace wheelhouse::render {

inline constexpr std::string_view repository_version = "1.4";

struct project_listing {
    std::string name;          // normalised: the link target
    std::string display_name;  // the link text
};

// Where file links point: "/files/" gives "/files/<sha256>/<filename>".
struct link_options {
    std::string files_base = "/files/";
    // Where PEP 740's integrity API answers ("<root>integrity/"); "" where none does (an export).
    std::string integrity_base;
    // Static exports for a CDN may point remote files straight at their URLs instead.
    bool remote_files_direct = false;
};

// Where `file` downloads from: files_base + "<sha256>/<percent-encoded filename>", or its
// remote URL when links.remote_files_direct says so.
std::string file_url(const catalog::file_record& file, const link_options& links);
// PEP 740: integrity_base + "<project>/<normalized version>/<filename>/provenance".
std::string provenance_url(const catalog::file_record& file, const link_options& links);

std::string project_list_html(std::span<const project_listing> projects);
std::string project_list_json(std::span<const project_listing> projects);

// files_base + "<sha256>/<filename>" of a release's PEP 825 variants.json.
std::string release_variants_url(const catalog::release_variants_file& release, const link_options& links);

// `files` in any order; pages list them by version (PEP 440) then filename. A quarantined
// project lists no files (PEP 792). After them, with hash and size, the PEP 825 variants.json of
// every release in `release_files` of which the page lists a variant wheel, as PEP 825 asks of
// every page that links variant wheels. A `note` for people (left_out_note) goes in a <p> before
// the links, and in JSON as "_note" (the index's own key, PEP 691).
std::string project_page_html(const catalog::project_record& project, std::span<const catalog::file_record> files,
                              const link_options& links,
                              std::span<const catalog::release_variants_file> release_files = {},
                              std::string_view note = {});
std::string project_page_json(const catalog::project_record& project, std::span<const catalog::file_record> files,
                              const link_options& links,
                              std::span<const catalog::release_variants_file> release_files = {},
                              std::string_view note = {});

// "2025-07-01T12:00:00.123000Z" (PEP 700 upload-time).
std::string iso8601_utc(std::int64_t unix_milliseconds);

}  // namespace wheelhouse::render
