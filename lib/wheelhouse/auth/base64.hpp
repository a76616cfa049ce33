#pragma once
// RFC 4648 base64 in the two alphabets wheelhouse meets: the standard one inside HTTP Basic
// credentials, the URL-safe one in the API tokens it prints.

#include <optional>
#include <string>
#include <string_view>

namespace wheelhouse::auth {

// Standard alphabet, '=' padded: what clients put after "Basic ".
std::string base64_encode(std::string_view bytes);

// URL-safe alphabet ('-' and '_'), unpadded: safe in URLs, shells and config files.
std::string base64url_encode(std::string_view bytes);

// Decodes the standard alphabet. Padding may be left off (some clients do); when present it
// must be right. Whitespace, the URL-safe characters, misplaced '=' and non-zero leftover
// bits (a non-canonical encoding) are rejected. nullopt when the text is not base64.
std::optional<std::string> base64_decode(std::string_view text);

}  // namespace wheelhouse::auth
