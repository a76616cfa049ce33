#include <catch2/catch.hpp>

#include <random>
#include <string>

#include "wheelhouse/crypto/hasher.hpp"
#include "wheelhouse/text/ascii.hpp"

using namespace wheelhouse;

namespace {

// The byte-at-a-time answers the word-at-a-time code must give.
text::byte_kinds kinds_one_by_one(std::string_view text) {
    text::byte_kinds kinds;
    for (const char c : text) {
        const auto byte = static_cast<unsigned char>(c);
        kinds.control |= byte < 0x20 || byte == 0x7F;
        kinds.non_ascii |= byte >= 0x80;
    }
    return kinds;
}

bool sha256_hex_one_by_one(std::string_view text) {
    if (text.size() != 64) return false;
    for (const char c : text) {
        if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
    }
    return true;
}

}  // namespace

TEST_CASE("text/swar: every byte value at every place of every length, as byte by byte", "[text][swar]") {
    for (std::size_t length = 1; length <= 24; ++length) {
        for (std::size_t at = 0; at < length; ++at) {
            for (unsigned value = 0; value < 256; ++value) {
                std::string text(length, 'u');
                text[at] = static_cast<char>(value);
                const auto fast = text::kinds_of_bytes(text);
                const auto slow = kinds_one_by_one(text);
                INFO("length " << length << ", byte " << value << " at " << at);
                REQUIRE(fast.control == slow.control);
                REQUIRE(fast.non_ascii == slow.non_ascii);
            }
        }
    }
    CHECK_FALSE(text::kinds_of_bytes("").control);
    CHECK_FALSE(text::kinds_of_bytes("").non_ascii);
}

TEST_CASE("text/swar: random texts, with the borrows and carries of neighbouring bytes", "[text][swar]") {
    std::mt19937 random(20261129);
    // Bytes near every boundary the tests draw, so neighbours borrow and carry.
    const std::string edges{'\0', '\x01', '\x1f', ' ', '!', '/', '0', '9', ':', '`', 'a', 'f', 'g', '\x7e', '\x7f',
                            '\x80', '\x81', '\xa0', '\xfe', '\xff'};
    for (int round = 0; round < 20000; ++round) {
        std::string text(std::uniform_int_distribution<std::size_t>(0, 80)(random), 'a');
        for (char& c : text) c = edges[std::uniform_int_distribution<std::size_t>(0, edges.size() - 1)(random)];
        const auto fast = text::kinds_of_bytes(text);
        const auto slow = kinds_one_by_one(text);
        REQUIRE(fast.control == slow.control);
        REQUIRE(fast.non_ascii == slow.non_ascii);

        std::string digest(64, '0');
        for (char& c : digest) c = "0123456789abcdef"[std::uniform_int_distribution<int>(0, 15)(random)];
        if (round % 2 == 0) digest[std::uniform_int_distribution<std::size_t>(0, 63)(random)] = text.empty() ? 'A' : text[0];
        REQUIRE(crypto::is_sha256_hex(digest) == sha256_hex_one_by_one(digest));
    }
}

TEST_CASE("text/swar: a sha256 in hex is 64 of '0'-'9' and 'a'-'f', whatever byte stands elsewhere", "[text][swar]") {
    const std::string good(64, 'f');
    REQUIRE(crypto::is_sha256_hex(good));
    REQUIRE(crypto::is_sha256_hex(std::string(64, '0')));
    for (std::size_t at = 0; at < 64; ++at) {
        for (unsigned value = 0; value < 256; ++value) {
            std::string text = good;
            text[at] = static_cast<char>(value);
            INFO("byte " << value << " at " << at);
            REQUIRE(crypto::is_sha256_hex(text) == sha256_hex_one_by_one(text));
        }
    }
    CHECK_FALSE(crypto::is_sha256_hex(std::string(63, 'a')));
    CHECK_FALSE(crypto::is_sha256_hex(std::string(65, 'a')));
}
