#include <catch2/catch.hpp>

#include <string>

#include "test_support.hpp"
#include "wheelhouse/auth/credentials.hpp"

using namespace wheelhouse;
using namespace wheelhouse::auth;

namespace {
const std::string token = "wh_Kx9q2mVb7LpR4tYc8NfZ1aWd3Ge6Hj0Ks5Uo-_Ti2Qr";
std::string basic(const std::string& user_pass) { return "Basic " + testing::base64(user_pass); }
std::string unpadded(std::string encoded) {
    REQUIRE(encoded.ends_with('='));  // or the row would test nothing
    while (encoded.ends_with('=')) encoded.pop_back();
    return encoded;
}
}  // namespace

TEST_CASE("auth: Authorization headers twine, curl and scripts send", "[auth]") {
    struct row {
        std::string header;
        credential_scheme scheme;
        std::string token;
    };
    const std::vector<row> table = {
        {basic("__token__:" + token), credential_scheme::basic, token},                 // twine, curl -u
        {"basic " + testing::base64("__token__:" + token), credential_scheme::basic, token},
        {"BASIC   " + testing::base64("__token__:" + token) + "  ", credential_scheme::basic, token},
        {"Basic\t" + testing::base64("__token__:" + token), credential_scheme::basic, token},
        {"Basic " + unpadded(testing::base64("__token__:" + token)), credential_scheme::basic, token},
        {basic("__token__:a:b:c"), credential_scheme::basic, "a:b:c"},  // the password may hold colons
        {basic("__token__:pypi-AgEIcHlwaS5vcmc"), credential_scheme::basic, "pypi-AgEIcHlwaS5vcmc"},
        {"Bearer " + token, credential_scheme::bearer, token},
        {"bearer " + token, credential_scheme::bearer, token},
        {"  Bearer    " + token + "\t", credential_scheme::bearer, token},
    };
    for (const auto& [header, scheme, expected] : table) {
        CAPTURE(header);
        const auto parsed = parse_authorization(header);
        INFO((parsed ? std::string() : parsed.error().message));
        REQUIRE(parsed);
        CHECK(parsed->scheme == scheme);
        CHECK(parsed->token == expected);
    }
}

TEST_CASE("auth: Authorization headers that are refused, and why", "[auth]") {
    struct row {
        std::string header;
        const char* message;
    };
    const std::vector<row> table = {
        {"", "the Authorization header is empty"},
        {"   ", "the Authorization header is empty"},
        {"Basic", "the Basic credentials are missing"},
        {"Basic   ", "the Basic credentials are missing"},
        {"Basic !!!!", "not valid base64"},
        {"Basic " + testing::base64("__token__:" + token).substr(1), "not valid base64"},
        {"Basic " + testing::base64("__token__:x") + " extra", "not valid base64"},
        {basic("__token__" + token), "no ':' between username and password"},
        {basic("alice:" + token), "use the username __token__ and the API token as the password"},
        {basic("__TOKEN__:" + token), "use the username __token__ and the API token as the password"},
        {basic(":" + token), "use the username __token__"},
        {basic(token + ":__token__"), "use the username __token__"},  // swapped fields
        {basic("__token__:"), "the password is empty"},
        {"Bearer", "the Bearer token is missing"},
        {"Bearer   ", "the Bearer token is missing"},
        {"Bearer " + token + " " + token, "contains whitespace"},
        {"Digest username=\"__token__\", realm=\"wheelhouse\"", "unsupported Authorization scheme 'Digest'"},
        {"Token " + token, "unsupported Authorization scheme 'Token'"},
        {token, "has no Basic or Bearer scheme"},  // the bare token, not echoed back
        {"wh_secret-value more", "has no Basic or Bearer scheme"},
    };
    for (const auto& [header, message] : table) {
        CAPTURE(header);
        const auto parsed = parse_authorization(header);
        REQUIRE_FALSE(parsed);
        CHECK(parsed.error().kind == error_kind::unauthorized);
        CHECK_THAT(parsed.error().message, Catch::Contains(message));
        // A refusal never repeats a secret.
        CHECK_THAT(parsed.error().message, !Catch::Contains(token.substr(3, 10)));
        CHECK_THAT(parsed.error().message, !Catch::Contains("secret-value"));
        // The log's reason repeats nothing of the header, not even a scheme name.
        const auto reading = read_authorization(header);
        REQUIRE_FALSE(reading.token);
        CHECK(reading.token.error().message == parsed.error().message);
        const std::string refusal(reading.refusal);
        CHECK_FALSE(refusal.empty());
        for (const char* sent : {"Digest", "Token", "wh_", "secret-value", "alice"})
            CHECK_THAT(refusal, !Catch::Contains(sent));
    }
}
