#include <catch2/catch.hpp>

#include <array>
#include <cstdint>
#include <string>

#include "wheelhouse/auth/token.hpp"
#include "wheelhouse/crypto/hasher.hpp"
#include "wheelhouse/render/html.hpp"
#include "wheelhouse/text/ascii.hpp"
#include "wheelhouse/text/hex.hpp"
#include "wheelhouse/text/quoted.hpp"

using namespace wheelhouse;

TEST_CASE("text/hex: every byte as two digits, lower case unless asked", "[text][hex]") {
    std::string all;
    for (unsigned byte = 0; byte < 256; ++byte) text::append_hex(all, static_cast<unsigned char>(byte));
    REQUIRE(all.size() == 512);
    CHECK(all.substr(0, 6) == "000102");
    CHECK(all.substr(2 * 0xab, 2) == "ab");
    CHECK(all.substr(510) == "ff");
    std::string upper;
    text::append_hex(upper, 0xab, text::hex_case::upper);
    CHECK(upper == "AB");
    const std::array<std::uint8_t, 3> bytes{0x00, 0x7f, 0xfe};
    CHECK(text::to_hex(bytes) == "007ffe");
}

TEST_CASE("text/hex: the spellings built on it are unchanged", "[text][hex]") {
    // FIPS 180-2's "abc": a token's stored hash is the SHA-256 of its secret, in lower-case hex.
    CHECK(auth::hash_secret("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    CHECK(crypto::sha256_hex("abc") == auth::hash_secret("abc"));
    CHECK(text::quoted("a\x01\xff") == "'a\\x01\\xFF'");
    std::string segment;
    render::append_percent_encoded_segment(segment, "a b/\xc3\xa9");
    CHECK(segment == "a%20b%2F%C3%A9");
}

TEST_CASE("text/hex: a URL's spaces and bytes past ASCII as %XX, every other byte kept", "[text][hex]") {
    CHECK(text::percent_encode_space_and_non_ascii("https://h/a b/caf\xc3\xa9\xff?x=\xc2\xa0") ==
          "https://h/a%20b/caf%C3%A9%FF?x=%C2%A0");
    CHECK(text::percent_encode_space_and_non_ascii(" edge ") == "%20edge%20");
    std::string printable;
    for (char c = '!'; c <= '~'; ++c) printable.push_back(c);
    CHECK(text::percent_encode_space_and_non_ascii(printable) == printable);
    CHECK(text::percent_encode_space_and_non_ascii("").empty());
    // Only the space and the 128 bytes past ASCII grow; '%' stays, as a URL's escapes are already
    // escapes.
    std::string every;
    for (unsigned byte = 0x20; byte < 256; ++byte) every.push_back(static_cast<char>(byte));
    const auto encoded = text::percent_encode_space_and_non_ascii(every);
    CHECK(encoded.size() == every.size() + 2 * (1 + 128));
    CHECK(encoded.substr(0, 7) == "%20!\"#$");
    CHECK(encoded.substr(encoded.size() - 6) == "%FE%FF");
}
