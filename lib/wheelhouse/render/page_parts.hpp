#pragma once
// The parts every simple-API project page is made of, whoever's files it lists: this index's
// (simple_pages.cpp) or an upstream's (upstream_pages.cpp). One home for how a file's link is
// written, so both kinds of page say the same things in the same words.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <boost/json/object.hpp>

namespace wheelhouse::render {

// One file as a page links it.
struct file_link {
    std::string_view filename;
    std::string url;                               // where it downloads from, without fragment
    std::string_view sha256;
    std::optional<std::string_view> requires_python;
    std::optional<std::string_view> yanked_reason;  // set (possibly empty) when yanked
    std::string_view metadata_sha256;               // of its core metadata (PEP 658); "" when there is none
    std::optional<std::uint64_t> size;              // PEP 700, JSON only
    std::optional<std::string> upload_time;         // PEP 700, JSON only
    std::string provenance;                         // PEP 740: its provenance's URL; "" when it has none
};

// "<!DOCTYPE html>…<meta name="pypi:repository-version" …>", the PEP 792 status meta when the
// status is not active, and the title and heading "Links for <project>".
void append_html_page_head(std::string& out, std::string_view api_version, std::string_view project,
                           std::string_view status, const std::optional<std::string>& status_reason);
void append_html_page_end(std::string& out);

// One <a> line: the URL with its #sha256 fragment, data-requires-python, data-yanked, the
// core metadata's hash under both of its attribute names (PEP 714 renamed it; older pips know
// only the first), and data-provenance (PEP 740).
void append_html_link(std::string& out, const file_link& link);

// A PEP 691 file object: filename, url, hashes, requires-python, size, upload-time, yanked, core-metadata
// under its PEP 714 name only (pip 22.3 to 23.1 crash on "dist-info-metadata" in JSON), and provenance
// (PEP 740) when the file has one.
boost::json::object json_file(const file_link& link);

// {"api-version": api_version}
boost::json::object json_meta(std::string_view api_version);

}  // namespace wheelhouse::render
