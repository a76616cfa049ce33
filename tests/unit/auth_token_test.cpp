#include <catch2/catch.hpp>

#include <set>
#include <string>

#include "wheelhouse/auth/token.hpp"
#include "wheelhouse/text/base64.hpp"

using namespace wheelhouse;
using namespace wheelhouse::auth;

TEST_CASE("auth: SHA-256 of known vectors, in lower-case hex", "[auth]") {
    // FIPS 180-2 examples and one token-shaped text (checked with Python's hashlib).
    CHECK(hash_secret("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    CHECK(hash_secret("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    CHECK(hash_secret("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq") ==
          "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
    CHECK(hash_secret("wh_" + std::string(43, 'A')) ==
          "4a74b0bdde1ec3c8dfc9c1b36074e07e030cba731e063fc2523ed949c062096a");
}

TEST_CASE("auth: generated tokens are 256 random bits, printable, and hashed", "[auth]") {
    std::set<std::string> tokens;
    for (int i = 0; i < 500; ++i) {
        const auto secret = generate_token();
        REQUIRE(secret);
        CHECK(secret->token.size() == token_length);
        CHECK(secret->token.starts_with("wh_"));
        CHECK(looks_like_token(secret->token));
        CHECK(secret->hash == hash_secret(secret->token));
        CHECK(secret->hash.size() == 64);
        // The body is the base64url form of exactly 32 bytes.
        std::string body = secret->token.substr(3);
        for (char& c : body) c = c == '-' ? '+' : c == '_' ? '/' : c;
        const auto raw = text::base64_decode(body);
        REQUIRE(raw);
        CHECK(raw->size() == token_random_bytes);
        tokens.insert(secret->token);
    }
    CHECK(tokens.size() == 500);
}

TEST_CASE("auth: token shape and constant-time comparison", "[auth]") {
    const std::string good = "wh_" + std::string(42, 'a') + "_";
    CHECK(looks_like_token(good));
    CHECK(looks_like_token("wh_" + std::string(43, '-')));
    CHECK_FALSE(looks_like_token("wh_" + std::string(42, 'a')));
    CHECK_FALSE(looks_like_token("wh_" + std::string(44, 'a')));
    CHECK_FALSE(looks_like_token("pypi-" + std::string(41, 'a')));
    CHECK_FALSE(looks_like_token("wh_" + std::string(42, 'a') + "="));
    CHECK_FALSE(looks_like_token("wh_" + std::string(42, 'a') + "+"));
    CHECK_FALSE(looks_like_token(""));

    CHECK(constant_time_equal("", ""));
    CHECK(constant_time_equal(hash_secret("x"), hash_secret("x")));
    CHECK_FALSE(constant_time_equal(hash_secret("x"), hash_secret("y")));
    CHECK_FALSE(constant_time_equal("abc", "abd"));
    CHECK_FALSE(constant_time_equal("abc", "ab"));
    CHECK_FALSE(constant_time_equal("", "a"));
    CHECK_FALSE(constant_time_equal(std::string("a\0b", 3), std::string("a\0c", 3)));
    CHECK(constant_time_equal(std::string("a\0b", 3), std::string("a\0b", 3)));
}
