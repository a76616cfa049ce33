#pragma once
// Eight bytes at a time in one 64-bit word ("SIMD within a register"): the byte tests of the
// hot paths (a redirect's URL, a download's sha256) in about one instruction a byte instead of
// five to eight, without intrinsics the baseline x86-64 build lacks.

#include <cstdint>
#include <cstring>
#include <string_view>

namespace wheelhouse::text::swar {

constexpr std::uint64_t ones = 0x0101010101010101ULL;
constexpr std::uint64_t highs = 0x8080808080808080ULL;

// The eight bytes at `bytes`, in whatever order the machine loads them (the tests below are
// about "some byte", which no order changes).
inline std::uint64_t load(const char* bytes) noexcept {
    std::uint64_t word;
    std::memcpy(&word, bytes, sizeof word);
    return word;
}

// The last `size` (< 8) bytes of a text, padded with `pad`, a byte no test is looking for.
inline std::uint64_t load_tail(const char* bytes, std::size_t size, char pad) noexcept {
    std::uint64_t word = ones * static_cast<unsigned char>(pad);
    std::memcpy(&word, bytes, size);
    return word;
}

// Nonzero when some byte of `word` is below `limit` (at most 0x80). A borrow may mark bytes
// above the first such byte too, so this answers "some", not "which".
constexpr std::uint64_t some_byte_below(std::uint64_t word, unsigned char limit) noexcept {
    return (word - ones * limit) & ~word & highs;
}

// The high bit of each byte of `word` that lies in [low, high], for words whose bytes are all
// ASCII (a byte of 0x80 or more may carry into its neighbour: test `word & highs` first).
constexpr std::uint64_t bytes_between(std::uint64_t word, unsigned char low, unsigned char high) noexcept {
    return (word + ones * (0x80 - low)) & ~(word + ones * (0x7F - high)) & highs;
}

}  // namespace wheelhouse::text::swar
