#include "wheelhouse/crypto/blake2b.hpp"

#include <algorithm>
#include <cassert>

namespace wheelhouse::crypto {
namespace {

constexpr std::array<std::uint64_t, 8> initial_values = {
    0x6a09e667f3bcc908ULL, 0xbb67ae8584caa73bULL, 0x3c6ef372fe94f82bULL, 0xa54ff53a5f1d36f1ULL,
    0x510e527fade682d1ULL, 0x9b05688c2b3e6c1fULL, 0x1f83d9abfb41bd6bULL, 0x5be0cd19137e2179ULL,
};

// RFC 7693 section 2.7: the message word order of each of the twelve rounds.
constexpr std::uint8_t sigma[12][16] = {
    {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}, {14, 10, 4, 8, 9, 15, 13, 6, 1, 12, 0, 2, 11, 7, 5, 3},
    {11, 8, 12, 0, 5, 2, 15, 13, 10, 14, 3, 6, 7, 1, 9, 4}, {7, 9, 3, 1, 13, 12, 11, 14, 2, 6, 5, 10, 4, 0, 15, 8},
    {9, 0, 5, 7, 2, 4, 10, 15, 14, 1, 11, 12, 6, 8, 3, 13}, {2, 12, 6, 10, 0, 11, 8, 3, 4, 13, 7, 5, 15, 14, 1, 9},
    {12, 5, 1, 15, 14, 13, 4, 10, 0, 7, 6, 3, 9, 2, 8, 11}, {13, 11, 7, 14, 12, 1, 3, 9, 5, 0, 15, 4, 8, 6, 2, 10},
    {6, 15, 14, 9, 11, 3, 0, 8, 12, 2, 13, 7, 1, 4, 10, 5}, {10, 2, 8, 4, 7, 6, 1, 5, 15, 11, 9, 14, 3, 12, 13, 0},
    {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}, {14, 10, 4, 8, 9, 15, 13, 6, 1, 12, 0, 2, 11, 7, 5, 3},
};

constexpr std::uint64_t rotate_right(std::uint64_t value, int bits) noexcept {
    return (value >> bits) | (value << (64 - bits));
}

std::uint64_t load_little_endian(const std::uint8_t* bytes) noexcept {
    std::uint64_t value = 0;
    for (int i = 7; i >= 0; --i) value = (value << 8) | bytes[i];
    return value;
}

void mix(std::array<std::uint64_t, 16>& v, int a, int b, int c, int d, std::uint64_t x, std::uint64_t y) noexcept {
    v[a] = v[a] + v[b] + x;
    v[d] = rotate_right(v[d] ^ v[a], 32);
    v[c] = v[c] + v[d];
    v[b] = rotate_right(v[b] ^ v[c], 24);
    v[a] = v[a] + v[b] + y;
    v[d] = rotate_right(v[d] ^ v[a], 16);
    v[c] = v[c] + v[d];
    v[b] = rotate_right(v[b] ^ v[c], 63);
}

}  // namespace

blake2b::blake2b(std::size_t digest_size) noexcept : state_(initial_values), digest_size_(digest_size) {
    assert(digest_size >= 1 && digest_size <= 64);
    // Parameter block word 0: digest length, key length 0, fanout 1, depth 1.
    state_[0] ^= 0x01010000ULL ^ static_cast<std::uint64_t>(digest_size);
}

void blake2b::compress(bool last) noexcept {
    std::array<std::uint64_t, 16> message{};
    for (std::size_t i = 0; i < 16; ++i) message[i] = load_little_endian(buffer_.data() + 8 * i);

    std::array<std::uint64_t, 16> v{};
    for (std::size_t i = 0; i < 8; ++i) {
        v[i] = state_[i];
        v[i + 8] = initial_values[i];
    }
    v[12] ^= counter_low_;
    v[13] ^= counter_high_;
    if (last) v[14] = ~v[14];

    for (const auto& order : sigma) {
        mix(v, 0, 4, 8, 12, message[order[0]], message[order[1]]);
        mix(v, 1, 5, 9, 13, message[order[2]], message[order[3]]);
        mix(v, 2, 6, 10, 14, message[order[4]], message[order[5]]);
        mix(v, 3, 7, 11, 15, message[order[6]], message[order[7]]);
        mix(v, 0, 5, 10, 15, message[order[8]], message[order[9]]);
        mix(v, 1, 6, 11, 12, message[order[10]], message[order[11]]);
        mix(v, 2, 7, 8, 13, message[order[12]], message[order[13]]);
        mix(v, 3, 4, 9, 14, message[order[14]], message[order[15]]);
    }
    for (std::size_t i = 0; i < 8; ++i) state_[i] ^= v[i] ^ v[i + 8];
}

void blake2b::update(std::span<const std::uint8_t> data) noexcept {
    while (!data.empty()) {
        // The last block must be compressed with the final flag, so a full buffer waits until
        // more input proves it is not the last.
        if (buffered_ == buffer_.size()) {
            counter_low_ += buffer_.size();
            if (counter_low_ < buffer_.size()) ++counter_high_;
            compress(false);
            buffered_ = 0;
        }
        const std::size_t taken = std::min(data.size(), buffer_.size() - buffered_);
        std::copy_n(data.begin(), taken, buffer_.begin() + static_cast<std::ptrdiff_t>(buffered_));
        buffered_ += taken;
        data = data.subspan(taken);
    }
}

void blake2b::finish(std::span<std::uint8_t> out) noexcept {
    counter_low_ += buffered_;
    if (counter_low_ < buffered_) ++counter_high_;
    std::fill(buffer_.begin() + static_cast<std::ptrdiff_t>(buffered_), buffer_.end(), std::uint8_t{0});
    compress(true);
    for (std::size_t i = 0; i < digest_size_ && i < out.size(); ++i) {
        out[i] = static_cast<std::uint8_t>(state_[i / 8] >> (8 * (i % 8)));
    }
}

}  // namespace wheelhouse::crypto
