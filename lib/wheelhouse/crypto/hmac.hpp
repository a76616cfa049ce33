#pragma once
// HMAC-SHA256 under one key, prepared once: each use copies the keyed state, so a key used for
// many messages (a SigV4 day key) pays OpenSSL's algorithm lookup and key set-up once.

#include <array>
#include <cstdint>
#include <string_view>

#include <openssl/types.h>

namespace wheelhouse::crypto {

using sha256_digest = std::array<std::uint8_t, 32>;

// False only when OpenSSL's configuration lacks HMAC or SHA-256: ask once, before any key.
bool hmac_sha256_available();

class hmac_sha256_key {
public:
    // Given hmac_sha256_available(), fails only as an allocation does (std::bad_alloc).
    explicit hmac_sha256_key(std::string_view key);
    hmac_sha256_key(const hmac_sha256_key&) = delete;
    hmac_sha256_key& operator=(const hmac_sha256_key&) = delete;
    ~hmac_sha256_key();

    // Safe from many threads at once: the prepared state is only read.
    sha256_digest mac(std::string_view data) const;

private:
    EVP_MAC_CTX* ready_ = nullptr;
};

inline std::string_view as_text(const sha256_digest& bytes) {
    return {reinterpret_cast<const char*>(bytes.data()), bytes.size()};
}

}  // namespace wheelhouse::crypto
