#pragma once
// Streaming message digests: SHA-2 and MD5 through OpenSSL's EVP, BLAKE2b-256 through our own
// blake2b (see there why). One interface, so a file is read once for every digest it needs.

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "wheelhouse/crypto/blake2b.hpp"
#include "wheelhouse/result.hpp"

namespace wheelhouse::crypto {

enum class hash_algorithm { sha256, sha384, sha512, blake2b_256, md5 };

// "sha256", "sha384", "sha512", "blake2b_256", "md5": the names RECORD and twine use.
std::string_view name_of(hash_algorithm algorithm) noexcept;
// By RECORD's spelling ("sha256"); nullopt for algorithms we do not compute.
std::optional<hash_algorithm> algorithm_named(std::string_view name) noexcept;

class hasher {
public:
    // Fails only when OpenSSL refuses the algorithm (MD5 under a FIPS-only configuration).
    static result<hasher> create(hash_algorithm algorithm);

    hasher(hasher&&) noexcept;
    hasher& operator=(hasher&&) noexcept;
    ~hasher();

    void update(std::span<const std::uint8_t> data) noexcept;
    void update(std::string_view data) noexcept;
    // The digest; the hasher is spent afterwards.
    std::vector<std::uint8_t> finish();
    std::string finish_hex() { return to_hex(finish()); }

    hash_algorithm algorithm() const noexcept { return algorithm_; }

    static std::string to_hex(std::span<const std::uint8_t> bytes);

private:
    struct evp_state;
    hasher(hash_algorithm algorithm, std::unique_ptr<evp_state> evp) noexcept;

    hash_algorithm algorithm_;
    std::unique_ptr<evp_state> evp_;        // SHA-2, MD5
    std::optional<crypto::blake2b> blake_;  // BLAKE2b-256
};

// The SHA-256 of a string as its 32 raw bytes.
std::string sha256_bytes(std::string_view data);
// Lower-case hex SHA-256 of a string; for METADATA and tests.
std::string sha256_hex(std::string_view data);

// True for exactly 64 lower-case hex digits.
bool is_sha256_hex(std::string_view text) noexcept;

}  // namespace wheelhouse::crypto
