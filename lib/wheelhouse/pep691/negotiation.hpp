#pragma once
// PEP 691 content negotiation: which form of a simple-API page a client gets.

#include <optional>
#include <string_view>

namespace wheelhouse::pep691 {

enum class page_format { html, json };

struct media_choice {
    page_format format = page_format::html;
    std::string_view content_type;  // what the response's Content-Type says
};

inline constexpr std::string_view json_v1 = "application/vnd.pypi.simple.v1+json";
inline constexpr std::string_view html_v1 = "application/vnd.pypi.simple.v1+html";
inline constexpr std::string_view text_html = "text/html";
inline constexpr std::string_view text_html_utf8 = "text/html; charset=utf-8";

// Picks by q-value from an Accept header; on a tie the order is JSON, v1 HTML, text/html.
// An absent or empty header means text/html. nullopt when nothing offered is acceptable (406).
// `html_only` leaves the JSON offers out (see prefers_html_for_core_metadata).
std::optional<media_choice> negotiate(std::string_view accept_header, bool html_only = false);

// pip 22.3 up to 23.2 read PEP 658 core metadata only from HTML pages (their JSON reader crashes
// on the key), so such a pip resolves without downloading wheels only if it gets HTML. Both
// answers are correct for pip, so a cache that ignores User-Agent still serves it correctly.
bool prefers_html_for_core_metadata(std::string_view user_agent);

// The `?format=` override: "json", "html", or one of the media types (the "latest" aliases too).
std::optional<media_choice> choose_by_format_parameter(std::string_view value);

}  // namespace wheelhouse::pep691
