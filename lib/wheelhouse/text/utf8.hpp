#pragma once
// Untrusted bytes as valid UTF-8, so that text echoed back in JSON stays valid JSON.

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace wheelhouse::text {

// `bytes` with every ill-formed UTF-8 sequence replaced by U+FFFD, one per maximal subpart
// (Unicode's recommended practice, and what Python's bytes.decode("utf-8", "replace") does):
// "a\xC3" -> "a\uFFFD", "\xE2\x82" -> one U+FFFD, "\xFF\xFE" -> two. Valid input comes back unchanged.
std::string replace_invalid_utf8(std::string_view bytes);

// Whether `bytes` is well-formed UTF-8 (RFC 3629: no overlong forms, surrogates or code points
// past U+10FFFF), the text replace_invalid_utf8 returns unchanged.
bool is_valid_utf8(std::string_view bytes) noexcept;

// Where `bytes` first stops being well-formed UTF-8, and how, for a message: "byte 0xff cannot
// start a character", "a malformed 3-byte character", "the text ends inside a 4-byte character".
struct utf8_fault {
    std::size_t offset = 0;  // of the sequence's first byte
    std::string what;
};
std::optional<utf8_fault> find_utf8_fault(std::string_view bytes);

}  // namespace wheelhouse::text
