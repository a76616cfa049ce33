#pragma once
// Untrusted bytes as valid UTF-8, so that text echoed back in JSON stays valid JSON.

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

}  // namespace wheelhouse::text
