#pragma once
// ASCII case and blanks, the one home for them: names, tags, headers and media types compare
// ASCII letters without case, whatever the locale (std::tolower follows it), and leave other
// bytes alone.

#include <string>
#include <string_view>

namespace wheelhouse::text {

// 'A'-'Z' to 'a'-'z'; every other byte unchanged.
constexpr char to_lower(char c) noexcept { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; }

// A space or a tab: the blanks of HTTP headers and of METADATA's folded lines.
constexpr bool is_blank(char c) noexcept { return c == ' ' || c == '\t'; }

// `text` with its ASCII letters lower-cased.
std::string to_lower(std::string_view text);

// `text` without the spaces and tabs around it (HTTP's optional whitespace, RFC 9110 §5.6.3).
std::string_view trim(std::string_view text) noexcept;

// Whether `a` and `b` are the same once their ASCII letters are lower-cased.
bool equals_ignoring_case(std::string_view a, std::string_view b) noexcept;

// Whether `text` begins with `prefix`, ASCII letters compared without case.
bool starts_with_ignoring_case(std::string_view text, std::string_view prefix) noexcept;

// Whether `text` ends with `suffix`, ASCII letters compared without case.
bool ends_with_ignoring_case(std::string_view text, std::string_view suffix) noexcept;

// Which kinds of byte `text` holds: a control byte (C0 or DEL) ends a header line or forges a
// log line; a byte past ASCII may need a UTF-8 check. One pass, eight bytes a step: every
// redirect echoes its URL.
struct byte_kinds {
    bool control = false;
    bool non_ascii = false;
};
byte_kinds kinds_of_bytes(std::string_view text) noexcept;

// `text` with every space and every byte past ASCII written as %XX (RFC 3986 §2.1): a URI cannot
// carry them, a header trims a space at its edges, and a client decodes raw bytes as it guesses
// (requests fails on bytes that are not UTF-8). Every byte survives, so the URL means the same.
std::string percent_encode_space_and_non_ascii(std::string_view text);

}  // namespace wheelhouse::text
