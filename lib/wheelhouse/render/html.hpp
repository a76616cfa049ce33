#pragma once
// Escaping for HTML text and attribute values: every value that comes from a wheel goes
// through here, so a summary like "<img onerror=…>" is shown, never run.

#include <string>
#include <string_view>

namespace wheelhouse::render {

// Escapes & < > " ' so the result is safe as element text and inside a quoted attribute.
void append_html_escaped(std::string& out, std::string_view text);
std::string html_escape(std::string_view text);

// Percent-encodes a URL path segment, leaving RFC 3986 unreserved characters as they are.
void append_percent_encoded_segment(std::string& out, std::string_view segment);

}  // namespace wheelhouse::render
