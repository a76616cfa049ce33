#include "wheelhouse/auth/token.hpp"

#include <openssl/crypto.h>
#include <openssl/rand.h>

#include <algorithm>
#include <array>

#include "wheelhouse/crypto/hasher.hpp"
#include "wheelhouse/text/base64.hpp"

namespace wheelhouse::auth {

result<token_secret> generate_token() {
    std::array<unsigned char, token_random_bytes> random{};
    if (RAND_bytes(random.data(), static_cast<int>(random.size())) != 1) {
        return make_error(error_kind::internal, "the system's random generator failed; no token was made");
    }
    token_secret secret;
    secret.token = std::string(token_prefix) + text::base64url_encode(random);
    OPENSSL_cleanse(random.data(), random.size());
    secret.hash = hash_secret(secret.token);
    if (secret.hash.empty()) return make_error(error_kind::internal, "OpenSSL could not compute SHA-256; no token was made");
    return secret;
}

std::string hash_secret(std::string_view token) {
    // Fails closed: an empty hash (OpenSSL broken) never equals a stored one.
    return crypto::sha256_hex(token);
}

bool constant_time_equal(std::string_view a, std::string_view b) noexcept {
    if (a.size() != b.size()) return false;
    if (a.empty()) return true;
    return CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

bool looks_like_token(std::string_view text) noexcept {
    if (text.size() != token_length || !text.starts_with(token_prefix)) return false;
    text.remove_prefix(token_prefix.size());
    return std::all_of(text.begin(), text.end(), [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_';
    });
}

}  // namespace wheelhouse::auth
