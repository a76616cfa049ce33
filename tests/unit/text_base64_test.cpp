#include <catch2/catch.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "test_support.hpp"
#include "wheelhouse/crypto/hasher.hpp"
#include "wheelhouse/text/base64.hpp"

using namespace wheelhouse;
using namespace wheelhouse::text;

TEST_CASE("text: base64url without padding, as RECORD writes digests", "[text]") {
    auto bytes = [](std::string_view text) {
        return std::vector<std::uint8_t>(text.begin(), text.end());
    };
    // RFC 4648 section 10 vectors, padding removed.
    const std::pair<const char*, const char*> table[] = {
        {"", ""}, {"f", "Zg"}, {"fo", "Zm8"}, {"foo", "Zm9v"}, {"foob", "Zm9vYg"}, {"fooba", "Zm9vYmE"}, {"foobar", "Zm9vYmFy"},
    };
    for (const auto& [input, expected] : table) {
        CHECK(base64url_encode(bytes(input)) == expected);
    }
    // The url-safe alphabet: 0xfb 0xff encodes with '-' and '_' where base64 has '+' and '/'.
    CHECK(base64url_encode(std::vector<std::uint8_t>{0xfb, 0xff, 0xbf}) == "-_-_");
    // sha256 of "" as a RECORD entry writes it.
    auto hasher = crypto::hasher::create(crypto::hash_algorithm::sha256);
    REQUIRE(hasher);
    CHECK(base64url_encode(hasher->finish()) == "47DEQpj8HBSa-_TImW-5JCeuQeRkm5NMpJWZG3hSuFU");
}

TEST_CASE("text: base64 decodes RFC 4648 vectors and round trips", "[text]") {
    struct row {
        const char* bytes;
        const char* encoded;
    };
    const row vectors[] = {
        {"", ""},           {"f", "Zg=="},         {"fo", "Zm8="},         {"foo", "Zm9v"},
        {"foob", "Zm9vYg=="}, {"fooba", "Zm9vYmE="}, {"foobar", "Zm9vYmFy"}, {"__token__:wh_abc", "X190b2tlbl9fOndoX2FiYw=="},
    };
    for (const auto& [bytes, encoded] : vectors) {
        CAPTURE(bytes);
        CHECK(testing::base64(bytes) == encoded);  // the vector itself is right
        CHECK(base64_decode(encoded) == std::optional<std::string>(bytes));
    }
    CHECK(base64url_encode("\xfb\xff") == "-_8");
    CHECK(base64url_encode("foob") == "Zm9vYg");

    // Every byte value, at every length up to a few groups.
    std::string all;
    for (int b = 0; b < 256; ++b) all.push_back(static_cast<char>(b));
    for (std::size_t length = 0; length <= 20; ++length) {
        for (std::size_t start = 0; start + length <= all.size(); start += 37) {
            const auto bytes = all.substr(start, length);
            CHECK(base64_decode(testing::base64(bytes)) == std::optional<std::string>(bytes));
        }
    }
}

TEST_CASE("text: base64 decoding accepts what clients send and nothing else", "[text]") {
    struct row {
        const char* text;
        const char* decoded;  // nullptr: rejected
    };
    const row table[] = {
        {"Zg", "f"},            // padding left off
        {"Zm8", "fo"},
        {"Zm9vYg", "foob"},
        {"Zg==", "f"},
        {"Z", nullptr},         // 6 bits make no byte
        {"Zm9vY", nullptr},
        {"Zg=", nullptr},       // padding present but short
        {"Zg===", nullptr},
        {"Z===", nullptr},
        {"Zm9v=", nullptr},     // padding where none belongs
        {"Zm9v====", nullptr},
        {"=Zm9", nullptr},
        {"Zm=v", nullptr},
        {"Zh==", nullptr},      // non-zero leftover bits: not the canonical "Zg=="
        {"Zm9=", nullptr},
        {"Zm 9v", nullptr},     // whitespace inside
        {"Zm9v\n", nullptr},
        {" Zm9v", nullptr},
        {"Zm-v", nullptr},      // URL-safe alphabet is not the Basic one
        {"Zm_v", nullptr},
        {"Zm9v\xc3\xa9", nullptr},
        {"", ""},
    };
    for (const auto& [text, decoded] : table) {
        CAPTURE(text);
        const auto result = base64_decode(text);
        if (decoded) {
            CHECK(result == std::optional<std::string>(decoded));
        } else {
            CHECK_FALSE(result);
        }
    }
}

TEST_CASE("text: base64url decodes what JWS writes, one text for each byte string", "[text]") {
    const std::pair<const char*, const char*> vectors[] = {
        {"", ""}, {"f", "Zg"}, {"fo", "Zm8"}, {"foo", "Zm9v"}, {"foobar", "Zm9vYmFy"}, {"\xfb\xff\xbf", "-_-_"},
    };
    for (const auto& [bytes, encoded] : vectors) {
        CAPTURE(encoded);
        CHECK(base64url_decode(encoded) == std::optional<std::string>(bytes));
    }
    // Padding, the standard alphabet, whitespace, a lone sixth of a byte and non-zero leftover
    // bits all have another spelling, so none is accepted.
    for (const char* refused : {"Zg==", "Zm8=", "+/+/", "Zm 9v", "Z", "Zh", "Zm9"}) {
        CAPTURE(refused);
        CHECK_FALSE(base64url_decode(refused));
    }
}
