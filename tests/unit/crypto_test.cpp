#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "wheelhouse/crypto/hasher.hpp"

using namespace wheelhouse;
using crypto::hash_algorithm;

namespace {

std::string digest_hex(hash_algorithm algorithm, std::string_view data) {
    auto hasher = crypto::hasher::create(algorithm);
    REQUIRE(hasher);
    hasher->update(data);
    return hasher->finish_hex();
}

// The same digest fed in pieces of `piece` bytes: streaming must not change the answer.
std::string digest_hex_in_pieces(hash_algorithm algorithm, std::string_view data, std::size_t piece) {
    auto hasher = crypto::hasher::create(algorithm);
    REQUIRE(hasher);
    for (std::size_t at = 0; at < data.size(); at += piece) hasher->update(data.substr(at, piece));
    return hasher->finish_hex();
}

}  // namespace

TEST_CASE("crypto: known digests of the standard test strings", "[crypto]") {
    const std::string million_a(1'000'000, 'a');
    struct row {
        hash_algorithm algorithm;
        std::string_view input;
        const char* hex;
    };
    // FIPS 180-2, RFC 1321 and RFC 7693 vectors; BLAKE2b-256 as Python's
    // hashlib.blake2b(digest_size=32) computes it.
    const row table[] = {
        {hash_algorithm::sha256, "", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"},
        {hash_algorithm::sha256, "abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"},
        {hash_algorithm::sha256, "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
         "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"},
        {hash_algorithm::sha256, million_a, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0"},
        {hash_algorithm::sha384, "abc",
         "cb00753f45a35e8bb5a03d699ac65007272c32ab0eded1631a8b605a43ff5bed8086072ba1e7cc2358baeca134c825a7"},
        {hash_algorithm::sha512, "abc",
         "ddaf35a193617abacc417349ae20413112e6fa4e89a97ea20a9eeee64b55d39a2192992a274fc1a836ba3c23a3feebbd"
         "454d4423643ce80e2a9ac94fa54ca49f"},
        {hash_algorithm::md5, "", "d41d8cd98f00b204e9800998ecf8427e"},
        {hash_algorithm::md5, "abc", "900150983cd24fb0d6963f7d28e17f72"},
        {hash_algorithm::md5, "The quick brown fox jumps over the lazy dog", "9e107d9d372bb6826bd81d3542a419d6"},
        {hash_algorithm::blake2b_256, "", "0e5751c026e543b2e8ab2eb06099daa1d1e5df47778f7787faab45cdf12fe3a8"},
        {hash_algorithm::blake2b_256, "abc", "bddd813c634239723171ef3fee98579b94964e3bb1cb3e427262c8c068d52319"},
        {hash_algorithm::blake2b_256, "The quick brown fox jumps over the lazy dog",
         "01718cec35cd3d796dd00020e0bfecb473ad23457d063b75eff29c0ffa2e58a9"},
    };
    for (const auto& [algorithm, input, hex] : table) {
        CAPTURE(crypto::name_of(algorithm), input.size());
        CHECK(digest_hex(algorithm, input) == hex);
    }
}

TEST_CASE("crypto: BLAKE2b-256 across block boundaries matches Python's hashlib", "[crypto]") {
    // hashlib.blake2b(bytes(i % 251 for i in range(n)), digest_size=32).hexdigest()
    const std::pair<std::size_t, const char*> table[] = {
        {127, "f2fe67ff342e21b8f45e8f2e0bcd1d9243245d50ee6c78042e9c491388791c72"},
        {128, "c3582f71ebb2be66fa5dd750f80baae97554f3b015663c8be377cfcb2488c1d1"},
        {129, "f7f3c46ba2564ff4c4c162da1f5b605f9f1c4aa6a20652a9f9a337c1a2f5b9c9"},
        {1000, "b372d0608f720c8c3dd41e9c8eecb10143b41abe520b616607e754bf79c08331"},
    };
    for (const auto& [size, hex] : table) {
        std::string data;
        for (std::size_t i = 0; i < size; ++i) data.push_back(static_cast<char>(i % 251));
        CAPTURE(size);
        CHECK(digest_hex(hash_algorithm::blake2b_256, data) == hex);
    }
}

TEST_CASE("crypto: feeding the data in pieces gives the same digest", "[crypto]") {
    std::string data;
    for (int i = 0; i < 100'000; ++i) data.push_back(static_cast<char>(i * 7 + 3));
    for (auto algorithm : {hash_algorithm::sha256, hash_algorithm::sha512, hash_algorithm::blake2b_256, hash_algorithm::md5}) {
        const auto whole = digest_hex(algorithm, data);
        for (std::size_t piece : {1u, 63u, 64u, 127u, 128u, 129u, 4096u}) {
            CAPTURE(crypto::name_of(algorithm), piece);
            CHECK(digest_hex_in_pieces(algorithm, data, piece) == whole);
        }
    }
}

TEST_CASE("crypto: algorithm names round-trip and sha256 hex is recognised", "[crypto]") {
    for (auto algorithm : {hash_algorithm::sha256, hash_algorithm::sha384, hash_algorithm::sha512,
                           hash_algorithm::blake2b_256, hash_algorithm::md5}) {
        CHECK(crypto::algorithm_named(crypto::name_of(algorithm)) == algorithm);
    }
    CHECK_FALSE(crypto::algorithm_named("sha1").has_value());
    CHECK_FALSE(crypto::algorithm_named("SHA256").has_value());
    CHECK(crypto::is_sha256_hex("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"));
    CHECK_FALSE(crypto::is_sha256_hex("E3B0C44298FC1C149AFBF4C8996FB92427AE41E4649B934CA495991B7852B855"));
    CHECK_FALSE(crypto::is_sha256_hex("e3b0c442"));
    CHECK_FALSE(crypto::is_sha256_hex("../../../../../../../../../../../../../../../../etc/passwd/xxxxx"));
}
