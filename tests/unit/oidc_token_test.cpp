#include <catch2/catch.hpp>

#include <openssl/hmac.h>

#include <boost/json.hpp>

#include "jwt_signer.hpp"
#include "wheelhouse/oidc/jwk.hpp"
#include "wheelhouse/oidc/jwt.hpp"
#include "wheelhouse/oidc/signature.hpp"
#include "wheelhouse/oidc/verifier.hpp"

using namespace wheelhouse;
using namespace wheelhouse::testing;
namespace json = boost::json;

namespace {

constexpr std::string_view issuer = "https://token.actions.githubusercontent.com";
constexpr std::string_view audience = "pkgs.example.com";
constexpr std::int64_t now = 1'900'000'000;

// One RSA and one P-256 key for the whole file: RSA key generation takes a while.
const signing_key& rsa_key() {
    static const auto key = signing_key::rsa("rsa-1");
    return key;
}
const signing_key& ec_key() {
    static const auto key = signing_key::p256("ec-1");
    return key;
}

json::object claims() {
    return {{"iss", issuer}, {"aud", audience}, {"iat", now - 10}, {"nbf", now - 10}, {"exp", now + 290},
            {"jti", "0b7d1a5e"}, {"repository", "Dao-AILab/flash-attention"}};
}

oidc::key_set keys() {
    auto parsed = oidc::parse_key_set(key_set_json({&rsa_key(), &ec_key()}));
    REQUIRE(parsed);
    return std::move(*parsed);
}

// The token checked as the exchange checks it: parsed, its key found by kid, then verified.
result<oidc::verified_token> check(const std::string& token, const oidc::key_set& set = keys()) {
    auto parsed = oidc::parse_token(token);
    if (!parsed) return parsed.error();
    auto key = set.find(parsed->key_id);
    if (!key) return invalid("no key");
    return oidc::verify_token(*parsed, *key, {std::string(issuer), std::string(audience), now});
}

std::string message_of(const std::string& token) {
    auto checked = check(token);
    return checked ? std::string("accepted") : checked.error().message;
}

std::string encode(std::string_view text) { return text::base64url_encode(text); }

}  // namespace

TEST_CASE("oidc: RS256 and ES256 tokens verify with the issuer's published keys", "[oidc]") {
    for (const auto* key : {&rsa_key(), &ec_key()}) {
        CAPTURE(key->key_id);
        auto verified = check(signed_token(*key, claims()));
        REQUIRE(verified);
        CHECK(verified->issuer == issuer);
        CHECK(verified->token_id == "0b7d1a5e");
        CHECK(verified->expires_seconds == now + 290);
        CHECK(oidc::string_claim(verified->claims, "repository") == "Dao-AILab/flash-attention");
    }
}

TEST_CASE("oidc: the algorithm list is fixed in code: none and HMAC are refused before any key is used", "[oidc]") {
    const auto payload = encode(json::serialize(claims()));
    // alg none with an empty signature, and with one: both refused by name.
    for (const std::string header : {R"({"alg":"none","kid":"rsa-1"})", R"({"alg":"None","kid":"rsa-1"})"}) {
        const auto refused = oidc::parse_token(encode(header) + "." + payload + "." + encode("x"));
        REQUIRE_FALSE(refused);
        CHECK_THAT(refused.error().message, Catch::Contains("never none or HMAC"));
        CHECK_FALSE(oidc::parse_token(encode(header) + "." + payload + "."));
    }
    // HS256 "signed" with the RSA public key's JWK text as the secret: the classic confusion.
    const std::string input = encode(R"({"alg":"HS256","kid":"rsa-1"})") + "." + payload;
    const std::string secret = json::serialize(rsa_key().jwk());
    unsigned char mac[EVP_MAX_MD_SIZE];
    unsigned int length = 0;
    HMAC(EVP_sha256(), secret.data(), static_cast<int>(secret.size()), reinterpret_cast<const unsigned char*>(input.data()),
         input.size(), mac, &length);
    const auto hmac = oidc::parse_token(input + "." + encode(std::string_view(reinterpret_cast<char*>(mac), length)));
    REQUIRE_FALSE(hmac);
    CHECK_THAT(hmac.error().message, Catch::Contains("'HS256'"));
    // An RS256 header on an EC key, and ES256 on an RSA key: the key's type decides, not the header.
    const auto swapped = signed_token(ec_key(), R"({"alg":"RS256","kid":"ec-1"})", json::serialize(claims()));
    CHECK_THAT(message_of(swapped), Catch::Contains("cannot check"));
}

TEST_CASE("oidc: a malformed token is refused with what is wrong", "[oidc]") {
    const auto good = signed_token(rsa_key(), claims());
    const auto first = good.find('.');
    const auto second = good.find('.', first + 1);
    const auto header = good.substr(0, first);
    const auto payload = good.substr(first + 1, second - first - 1);
    const auto signature = good.substr(second + 1);
    const std::pair<std::string, std::string> table[] = {
        {"", "three base64url parts"},
        {"abc", "three base64url parts"},
        {good + ".x", "three base64url parts"},
        {header + "=." + payload + "." + signature, "not unpadded base64url"},
        {header + "." + payload + "." + signature + "=", "not unpadded base64url"},
        {header + "." + payload + ".", "signature that is empty"},
        {encode(R"({"alg":"RS256"})") + "." + payload + "." + signature, "names no signing key"},
        {encode(R"({"alg":"RS256","kid":"rsa-1","typ":"at+jwt"})") + "." + payload + "." + signature, "\"typ\""},
        {encode(R"({"alg":"RS256","kid":"rsa-1","crit":["exp"]})") + "." + payload + "." + signature, "\"crit\""},
        {encode(R"({"alg":"none","kid":"rsa-1","alg":"RS256"})") + "." + payload + "." + signature, "appears twice"},
        {header + "." + encode(R"({"aud":"x","aud":"pkgs.example.com"})") + "." + signature, "appears twice"},
        {header + "." + encode("[1,2]") + "." + signature, "not a JSON object"},
        {std::string(oidc::max_token_bytes + 1, 'a'), "at most 16384"},
    };
    for (const auto& [token, reason] : table) {
        CAPTURE(token.substr(0, 120));
        const auto refused = oidc::parse_token(token);
        REQUIRE_FALSE(refused);
        CHECK(refused.error().kind == error_kind::invalid);
        CHECK_THAT(refused.error().message, Catch::Contains(reason));
    }
}

TEST_CASE("oidc: a signature by another key, or over other bytes, does not verify", "[oidc]") {
    const auto stranger = signing_key::rsa("rsa-1");  // the issuer's kid, someone else's key
    CHECK_THAT(message_of(signed_token(stranger, claims())), Catch::Contains("does not verify"));
    auto token = signed_token(rsa_key(), claims());
    auto tampered = claims();
    tampered["repository"] = "attacker/fork";
    const auto first = token.find('.');
    const auto second = token.find('.', first + 1);
    token = token.substr(0, first) + "." + encode(json::serialize(tampered)) + token.substr(second);
    CHECK_THAT(message_of(token), Catch::Contains("does not verify"));
    // ES256 signatures are exactly r || s: a DER signature (what OpenSSL makes) is refused by its length.
    const auto ec_token = signed_token(ec_key(), claims());
    auto parsed = oidc::parse_token(ec_token);
    REQUIRE(parsed);
    const auto set = keys();
    const std::string der_like = parsed->signature + std::string(8, '\0');
    const auto refused = oidc::check_signature(parsed->alg, *set.find("ec-1"), parsed->signing_input, der_like);
    REQUIRE_FALSE(refused);
    CHECK_THAT(refused.error().message, Catch::Contains("72 bytes"));
}

TEST_CASE("oidc: exactly one audience, ours, and the times within a 30 s leeway", "[oidc]") {
    struct row {
        const char* claim;
        json::value value;
        const char* expected;  // "accepted" or part of the refusal
    };
    const row table[] = {
        {"aud", "pypi", "audience 'pypi', not this index's 'pkgs.example.com'"},
        {"aud", json::array{"pkgs.example.com", "pypi"}, "names 2 audiences"},
        {"aud", json::array{}, "names 0 audiences"},
        {"aud", json::array{"pkgs.example.com"}, "accepted"},
        {"aud", 7, "not a string"},
        {"exp", now - 31, "expired 31 s ago"},
        {"exp", now - 30, "accepted"},
        {"exp", "1900000300", "not a time in seconds"},
        {"exp", 1.9000003e9, "accepted"},
        {"nbf", now + 31, "not valid for another 31 s"},
        {"nbf", now + 30, "accepted"},
        {"iat", now + 31, "issued 31 s in the future"},
        {"iat", now - 86'400, "valid for 86690 s"},
        {"iss", "https://token.actions.githubusercontent.com/", "is from the issuer"},
        {"jti", "", "no token id"},
        {"jti", json::string(std::string(257, 'j')), "no token id"},
        {"jti", 5, "no token id"},
    };
    for (const auto& [claim, value, expected] : table) {
        CAPTURE(claim, json::serialize(value));
        auto written = claims();
        written[claim] = value;
        CHECK_THAT(message_of(signed_token(rsa_key(), written)), Catch::Contains(expected));
    }
    for (const char* required : {"exp", "iat", "aud", "jti"}) {
        CAPTURE(required);
        auto written = claims();
        written.erase(required);
        CHECK(message_of(signed_token(rsa_key(), written)) != "accepted");
    }
    auto without_nbf = claims();
    without_nbf.erase("nbf");
    CHECK(message_of(signed_token(rsa_key(), without_nbf)) == "accepted");
}

TEST_CASE("oidc: a key set keeps the keys that sign, and refuses what cannot be decided", "[oidc]") {
    auto rsa = rsa_key().jwk();
    auto ec = ec_key().jwk();
    auto encryption = rsa;
    encryption["kid"] = "enc-1";
    encryption["use"] = "enc";
    const json::object symmetric{{"kty", "oct"}, {"kid", "hmac"}, {"k", "c2VjcmV0"}};
    auto no_kid = ec;
    no_kid.erase("kid");
    auto read = oidc::parse_key_set(json::serialize(json::object{{"keys", json::array{rsa, ec, encryption, symmetric, no_kid}}}));
    REQUIRE(read);
    CHECK(read->key_ids() == "'rsa-1', 'ec-1'");

    const auto small = signing_key::rsa("small", 1024);
    auto off_curve = ec;
    off_curve["y"] = ec["x"];
    auto short_x = ec;
    short_x["x"] = text::base64url_encode(std::string(31, '\1'));
    auto wrong_alg = rsa;
    wrong_alg["alg"] = "ES256";
    auto even = rsa;
    even["e"] = "AQAA";  // 65536
    const std::pair<json::array, std::string> refused[] = {
        {{rsa, rsa}, "two keys with the id 'rsa-1'"},
        {{small.jwk()}, "RSA key of 1024 bits"},
        {{off_curve}, "not a valid public key"},  // OpenSSL refuses a point off the curve as it builds the key
        {{short_x}, "not 32 bytes"},
        {{wrong_alg}, "published for 'ES256'"},
        {{even}, "exponent"},
        {{symmetric}, "holds no RSA, P-256 or P-384 signing key"},
        {{}, "holds no RSA"},
    };
    for (const auto& [list, reason] : refused) {
        CAPTURE(json::serialize(list));
        auto parsed = oidc::parse_key_set(json::serialize(json::object{{"keys", list}}));
        REQUIRE_FALSE(parsed);
        CHECK_THAT(parsed.error().message, Catch::Contains(reason));
    }
    CHECK_FALSE(oidc::parse_key_set(R"({"keys": [], "keys": []})"));
    CHECK_FALSE(oidc::parse_key_set(R"({"nokeys": []})"));
    CHECK_THAT(oidc::parse_key_set(std::string(oidc::max_key_set_bytes + 1, ' ')).error().message,
               Catch::Contains("at most 262144"));
}

TEST_CASE("oidc: a JWK published for one algorithm checks only that one", "[oidc]") {
    auto rsa = rsa_key().jwk();
    rsa["alg"] = "RS384";
    auto set = oidc::parse_key_set(json::serialize(json::object{{"keys", json::array{rsa}}}));
    REQUIRE(set);
    auto parsed = oidc::parse_token(signed_token(rsa_key(), claims()));
    REQUIRE(parsed);
    const auto refused = oidc::verify_token(*parsed, *set->find("rsa-1"), {std::string(issuer), std::string(audience), now});
    REQUIRE_FALSE(refused);
    CHECK_THAT(refused.error().message, Catch::Contains("published key 'rsa-1' for RS384"));
}

TEST_CASE("oidc: a discovery document must name its issuer and keep its keys on the issuer's host", "[oidc]") {
    const auto document = [](std::string_view named, std::string_view uri) {
        return json::serialize(json::object{{"issuer", named}, {"jwks_uri", uri}});
    };
    const std::string keys_uri = std::string(issuer) + "/.well-known/jwks";
    auto found = oidc::jwks_uri_of(document(issuer, keys_uri), issuer);
    REQUIRE(found);
    CHECK(*found == keys_uri);
    CHECK(oidc::discovery_url("https://gitlab.com/") == "https://gitlab.com/.well-known/openid-configuration");
    const std::pair<std::string, std::string> refused[] = {
        {document("https://evil.example", keys_uri), "names the issuer 'https://evil.example'"},
        {document(issuer, "https://evil.example/jwks"), "not https:// on the issuer's own host"},
        {document(issuer, "http://token.actions.githubusercontent.com/jwks"), "not https://"},
        {document(issuer, "https://token.actions.githubusercontent.com:8443/jwks"), "not https://"},
        {document(issuer, "https://x@token.actions.githubusercontent.com/jwks"), "not https://"},
        {R"({"issuer": "https://token.actions.githubusercontent.com"})", "no \"jwks_uri\""},
        {"not json", "not valid JSON"},
    };
    for (const auto& [text, reason] : refused) {
        CAPTURE(text);
        auto uri = oidc::jwks_uri_of(text, issuer);
        REQUIRE_FALSE(uri);
        CHECK_THAT(uri.error().message, Catch::Contains(reason));
    }
}
