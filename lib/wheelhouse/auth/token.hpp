#pragma once
// API tokens: generated once, shown once, stored only as a hash.

#include <string>
#include <string_view>

#include "wheelhouse/result.hpp"

namespace wheelhouse::auth {

// Every token starts so, which lets people (and secret scanners) recognise one.
inline constexpr std::string_view token_prefix = "wh_";
inline constexpr std::size_t token_random_bytes = 32;  // 256 bits
inline constexpr std::size_t token_length = 3 + 43;    // prefix + unpadded base64url of 32 bytes

struct token_secret {
    std::string token;  // "wh_" + 43 base64url characters: print it once, never store it
    std::string hash;   // hash_secret(token): what the catalog keeps
};

// A new token from OpenSSL's CSPRNG (RAND_bytes). Fails only when the CSPRNG does.
result<token_secret> generate_token();

// Lower-case hex SHA-256 of the token text. A plain fast hash is right here, unlike for
// passwords: a token carries 256 random bits, so no dictionary or brute force can reach it
// and a slow KDF would only cost every request CPU. It also lets the catalog look a token
// up by its hash through an index. Empty only if OpenSSL cannot hash at all (fails closed).
std::string hash_secret(std::string_view token);

// Compares in time that depends only on the lengths (CRYPTO_memcmp), so a hash comparison
// leaks nothing of where two values differ. Different lengths compare unequal.
bool constant_time_equal(std::string_view a, std::string_view b) noexcept;

// True for text shaped like a token generate_token() makes. Lets the server tell a user who
// sent a PyPI token or a password what is wrong without looking anything up.
bool looks_like_token(std::string_view text) noexcept;

}  // namespace wheelhouse::auth
