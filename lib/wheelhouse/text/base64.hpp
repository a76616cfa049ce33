#pragma once
// RFC 4648 base64 in the two alphabets wheelhouse meets: the standard one inside HTTP Basic
// credentials and Sigstore's attestations, the URL-safe one in the API tokens it prints, the digests of a
// wheel's RECORD and the JSON Web Tokens and keys of trusted publishing (read).

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

// The standard alphabet, padded, as Sigstore's signed entry timestamps write an entry's body.
std::string base64_encode(std::string_view bytes);

// Decodes the standard alphabet. Padding may be left off (some clients do); when present it
// must be right. Whitespace, the URL-safe characters, misplaced '=' and non-zero leftover
// bits (a non-canonical encoding) are rejected. nullopt when the text is not base64.
std::optional<std::string> base64_decode(std::string_view text);

// Decodes the URL-safe alphabet without padding, as JSON Web Tokens and keys write it (RFC 7515
// section 2): '=', '+', '/', whitespace and non-zero leftover bits are rejected, so each byte
// string has exactly one text. nullopt when the text is not such base64url.
std::optional<std::string> base64url_decode(std::string_view text);

}  // namespace wheelhouse::text
