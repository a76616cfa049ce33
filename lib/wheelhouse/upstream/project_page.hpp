#pragma once
// An upstream index's project page (PEP 691 JSON or PEP 503 HTML) as this index takes it: the
// files it lists that belong to the project, each with what pip reads of it. Read strictly, in
// one pass, in time linear in the page:
//  - refused whole: a page that is not UTF-8, is not valid JSON or holds a key twice, nests
//    deeper than a bound, declares another major api-version, names another project (JSON), puts
//    one link inside another or leaves a comment or link open (HTML), lists more than max_files
//    files, lists one filename twice with other hashes, has a <base href> past max_url_length,
//    or whose kept URLs add up, resolved, to more than twice its size (plus 64 KiB);
//  - left out, and counted: a file that is not a wheel or sdist of this very project (by the
//    name pip reads, the URL's last segment), that has no sha256, whose URL is not http(s), or
//    whose HTML link text differs from its URL's filename, or whose URL is past max_url_length
//    as written or resolved;
//  - dropped from a file that is kept: an upload-time of another shape, and a provenance URL
//    that is not http(s) or is longer than max_url_length (pip never reads it).
// Pure: bytes in, the page or the reason out.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "wheelhouse/result.hpp"

namespace wheelhouse::upstream {

enum class page_format { json, html };

struct upstream_file {
    std::string filename;  // the URL's last segment, percent-decoded: what pip calls the file
    std::string url;       // absolute, without its fragment
    std::string sha256;    // lower-case hex
    std::optional<std::string> requires_python;
    std::optional<std::string> yanked_reason;    // set (possibly empty) when yanked (PEP 592)
    std::optional<std::string> metadata_sha256;  // PEP 658/714 core metadata, when given with its sha256
    std::optional<std::uint64_t> size;           // PEP 700
    std::optional<std::string> upload_time;      // PEP 700, as written ("2025-01-31T12:00:00.123456Z")
    std::optional<std::string> provenance;       // PEP 740: its provenance's URL, absolute http(s)
};

struct project_page {
    std::string project;                   // normalised (PEP 503)
    std::string api_version = "1.0";       // the upstream's, "1.0" to "1.4": never more than this index speaks
    std::optional<std::string> status;     // PEP 792: "archived", "quarantined" or "deprecated"; none: active
    std::optional<std::string> status_reason;
    std::vector<std::string> versions;     // PEP 700, from JSON 1.1 and later
    bool versions_listed = false;          // the page had "versions" (maybe empty)
    std::vector<upstream_file> files;      // in the page's order
    std::size_t left_out = 0;              // files listed but not kept
    std::string first_left_out;            // why the first of them was, for the log
};

inline constexpr std::size_t max_files = 200'000;
inline constexpr std::size_t max_url_length = 8192;
inline constexpr std::size_t max_text_length = 4096;  // requires-python, a yank's reason, a status reason

struct page_source {
    std::string project;  // the normalised name the page was asked for
    std::string url;      // where it was read, for relative links
    page_format format = page_format::json;
};

result<project_page> parse_project_page(std::string_view body, const page_source& source);

// The page format a Content-Type names: PEP 691's two, or text/html (PEP 503); nullopt for any other.
std::optional<page_format> format_of_content_type(std::string_view content_type);

// The projects (normalised) `filename` may be a file of, as pip reads names: the one a wheel's
// name parses to; for an sdist (.tar.gz, .zip, .tar.bz2, .tgz, .tar.xz, .tar), each name before
// a '-' that is followed by a PEP 440 version ("a-b-1.0.zip": a-b, and a if "b-1.0" were a
// version). None for a name that is not printable ASCII, holds a path, or is past 255 bytes.
std::vector<std::string> projects_named_by(std::string_view filename);

// Whether a page of `project` (normalised) may list `filename`: one of projects_named_by's.
bool names_file_of(std::string_view filename, std::string_view project);

// The api-version a page declared ("1.0" … "1.x"): major 1, else invalid; minor capped at ours.
result<std::string> supported_api_version(std::string_view declared);

}  // namespace wheelhouse::upstream
