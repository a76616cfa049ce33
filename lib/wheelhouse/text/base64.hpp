#pragma once
// RFC 4648 base64 in the two alphabets wheelhouse meets: the standard one inside HTTP Basic
// credentials (read only), the URL-safe one in the API tokens it prints and the digests of a
// wheel's RECORD.

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace wheelhouse::text {

// URL-safe alphabet ('-' and '_'), unpadded (RFC 4648 section 5): safe in URLs, shells and
// config files, and how RECORD writes digests.
std::string base64url_encode(std::span<const std::uint8_t> bytes);
std::string base64url_encode(std::string_view bytes);

// Decodes the standard alphabet. Padding may be left off (some clients do); when present it
// must be right. Whitespace, the URL-safe characters, misplaced '=' and non-zero leftover
// bits (a non-canonical encoding) are rejected. nullopt when the text is not base64.
std::optional<std::string> base64_decode(std::string_view text);

}  // namespace wheelhouse::text
