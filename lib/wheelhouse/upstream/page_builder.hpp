#pragma once
// What the JSON and HTML readers share (project_page.cpp): a link as a page gives it becomes an
// upstream_file, or is left out with the reason, or refuses the page. Internal to upstream/.

#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

#include <boost/url/url.hpp>

#include "wheelhouse/upstream/project_page.hpp"

namespace wheelhouse::upstream::detail {

// A file as a page lists it, before it is checked: its URL as written (relative or absolute),
// the sha256 the page gives for it ("" when none), and the rest as read.
struct listed_link {
    std::string reference;
    std::string sha256;
    std::string provenance_reference;  // PEP 740's provenance URL as written; "" when none
    upstream_file attributes;  // filename, url and sha256 are set by the builder
    std::string link_text;     // the page's name for the file (HTML: the link's text; JSON: filename)
    bool check_text = false;   // it must be the filename pip reads from the URL
};

class page_builder {
public:
    // `body_bytes`: the page's size, which bounds what its kept URLs may add up to once resolved.
    page_builder(const page_source& source, std::size_t body_bytes);

    // The URL relative links resolve against: the page's, or a <base href> (HTML).
    result<void> set_base(std::string_view reference);

    // Keeps the file, leaves it out (counted, with the first reason), or refuses the page.
    result<void> add(listed_link link);
    void leave_out(std::string why);

    project_page& page() noexcept { return page_; }
    project_page finish() &&;

private:
    // `reference` resolved against the base, when it is an http(s) URL with a host of at most
    // max_url_length bytes, both as written and as resolved.
    std::optional<boost::urls::url> http_url(std::string_view reference) const;

    page_source source_;
    boost::urls::url base_;
    project_page page_;
    std::unordered_map<std::string, std::size_t> by_filename_;  // index into page_.files
    // Resolving prefixes the page's origin (or a <base href>) to each relative link: what is
    // kept stays linear in the page, never base length × links.
    static constexpr std::size_t url_budget_floor = 64 * 1024;
    std::size_t url_budget_;
    std::size_t url_bytes_ = 0;  // of every kept file's URL and provenance
};

// "sha256=<hex>" (HTML's data-core-metadata) or a URL fragment "sha256=<hex>[&…]": the digest
// in lower case, or "" when it names no valid sha256.
std::string sha256_named_in(std::string_view text);

// Whether `text` has the shape of PEP 700's upload-time: "YYYY-MM-DDTHH:MM:SS[.fraction]Z".
bool is_upload_time(std::string_view text) noexcept;

// PEP 792: one of "archived", "quarantined", "deprecated"; nullopt for "active" and what is unknown.
std::optional<std::string> known_status(std::string_view status);

result<project_page> parse_json_page(std::string_view body, const page_source& source);
result<project_page> parse_html_page(std::string_view body, const page_source& source);

}  // namespace wheelhouse::upstream::detail
