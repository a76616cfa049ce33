#pragma once
// BLAKE2b (RFC 7693) with a chosen digest length, unkeyed. OpenSSL 3.0's EVP offers only the
// 64-byte digest, and BLAKE2b-256 is not a truncation of it (the length is part of the
// parameter block), so twine's blake2_256_digest needs its own implementation.

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>

namespace wheelhouse::crypto {

class blake2b {
public:
    // digest_size in bytes, 1..64.
    explicit blake2b(std::size_t digest_size) noexcept;

    void update(std::span<const std::uint8_t> data) noexcept;
    // Writes digest_size() bytes to out; the object is spent afterwards.
    void finish(std::span<std::uint8_t> out) noexcept;
    std::size_t digest_size() const noexcept { return digest_size_; }

private:
    void compress(bool last) noexcept;

    std::array<std::uint64_t, 8> state_{};
    std::array<std::uint8_t, 128> buffer_{};
    std::size_t buffered_ = 0;
    std::uint64_t counter_low_ = 0;  // bytes compressed so far, 128-bit
    std::uint64_t counter_high_ = 0;
    std::size_t digest_size_;
};

}  // namespace wheelhouse::crypto
