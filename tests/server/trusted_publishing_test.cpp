#include <catch2/catch.hpp>

#include <boost/json.hpp>

#include "jwt_signer.hpp"
#include "test_server.hpp"
#include "wheelhouse/oidc/publisher_store.hpp"

using namespace wheelhouse;
using namespace wheelhouse::testing;
namespace json = boost::json;

namespace {

constexpr std::string_view issuer = "https://ci.example";

const signing_key& pinned_key() {
    static const auto key = signing_key::p256("pinned-1");
    return key;
}

// A server whose issuer's keys are pinned (no network), with one trusted publisher.
server_settings pinned_settings() {
    server_settings settings;
    auto keys = oidc::parse_key_set(key_set_json({&pinned_key()}));
    REQUIRE(keys);
    settings.app.publishing.pinned_keys.emplace(std::string(issuer), std::move(*keys));
    settings.app.publishing.audience = "pkgs.example.com";
    return settings;
}

void trust(test_server& server, std::string labels = "") {
    auth::token_store tokens(server.catalog());
    oidc::publisher_store publishers(server.catalog(), tokens);
    oidc::publisher draft;
    draft.project = "kernels";
    draft.issuer = std::string(issuer);
    draft.repository = "kernels-community/kernels";
    draft.owner_id = "4001";
    draft.workflow = "publish.yml";
    draft.label_pattern = std::move(labels);
    REQUIRE(publishers.add(draft, "test"));
}

json::object claims(std::string jti) {
    const auto now = std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
    return {{"iss", issuer}, {"aud", "pkgs.example.com"}, {"iat", now}, {"exp", now + 300}, {"jti", std::move(jti)},
            {"repository", "kernels-community/kernels"}, {"repository_owner", "kernels-community"},
            {"repository_owner_id", "4001"},
            {"job_workflow_ref", "kernels-community/kernels/.github/workflows/publish.yml@refs/heads/main"},
            {"ref", "refs/heads/main"}, {"sha", "abc"}};
}

http_response mint(test_server& server, const std::string& token) {
    return server.request(http::verb::post, "/_/oidc/mint-token", {},
                          json::serialize(json::object{{"token", token}}));
}

}  // namespace

TEST_CASE("trusted publishing: a token of a trusted workflow is traded for an upload token that uploads",
          "[server][oidc]") {
    test_server server(pinned_settings());
    trust(server);
    const auto audience = server.get("/_/oidc/audience");
    CHECK(audience.result_int() == 200);
    CHECK(json::parse(audience.body()) == json::value{{"audience", "pkgs.example.com"}});

    const auto minted = mint(server, signed_token(pinned_key(), claims("j-1")));
    REQUIRE(minted.result_int() == 200);
    CHECK(minted[http::field::cache_control] == "no-store");
    const auto answer = json::parse(minted.body()).as_object();
    CHECK(answer.at("success") == true);
    const std::string secret(answer.at("token").as_string());
    const auto upload = server.request(http::verb::put, "/api/v1/files/kernels-1.0-py3-none-any.whl",
                                       {{http::field::authorization, "Bearer " + secret}}, make_wheel("kernels", "1.0"));
    CHECK(upload.result_int() == 201);
    const auto elsewhere = server.request(http::verb::put, "/api/v1/files/xformers-1.0-py3-none-any.whl",
                                          {{http::field::authorization, "Bearer " + secret}}, make_wheel("xformers", "1.0"));
    CHECK(elsewhere.result_int() == 403);
}

TEST_CASE("trusted publishing: refusals are 422 in PyPI's shape, with the reason", "[server][oidc]") {
    test_server server(pinned_settings());
    trust(server);
    auto wrong_audience = claims("j-2");
    wrong_audience["aud"] = "pypi";
    auto other_owner = claims("j-3");
    other_owner["repository_owner_id"] = "9999";
    const std::tuple<std::string, std::string, std::string> table[] = {
        {json::serialize(json::object{{"token", signed_token(pinned_key(), wrong_audience)}}), "invalid-token",
         "audience 'pypi'"},
        {json::serialize(json::object{{"token", signed_token(pinned_key(), other_owner)}}), "invalid-publisher",
         "repository_owner_id is '9999'"},
        {R"({"tokens": "x"})", "invalid-payload", "no \"token\" string"},
        {"[]", "invalid-payload", "JSON object"},
    };
    for (const auto& [body, code, reason] : table) {
        CAPTURE(body);
        const auto refused = server.request(http::verb::post, "/_/oidc/mint-token", {}, body);
        CHECK(refused.result_int() == 422);
        CHECK(refused[http::field::content_type] == "application/problem+json");
        const auto answer = json::parse(refused.body()).as_object();
        CHECK(answer.at("message") == "Token request failed");
        const auto& error = answer.at("errors").as_array().at(0).as_object();
        CHECK(error.at("code").as_string() == code);
        CHECK_THAT(std::string(error.at("description").as_string()), Catch::Contains(reason));
    }
    CHECK(server.tokens().list()->empty());
}

TEST_CASE("trusted publishing: PEP 807 discovery answers for the upload paths only", "[server][oidc]") {
    test_server server(pinned_settings());
    const auto found = server.get("/.well-known/pytp?discover=%2Flegacy%2F", {{http::field::host, "pkgs.example.com"}});
    REQUIRE(found.result_int() == 200);
    const auto document = json::parse(found.body()).as_object();
    CHECK(document.at("audience-endpoint") == "http://pkgs.example.com/_/oidc/audience");
    CHECK(document.at("token-mint-endpoint") == "http://pkgs.example.com/_/oidc/mint-token");
    // Every 404 in the row's audience: PEP 807's problem document, its fix in the description.
    for (const auto& [target, host, fix] :
         {std::tuple{"/.well-known/pytp?discover=%2Fsimple%2F", "pkgs.example.com", "uploads to /legacy/"},
          std::tuple{"/.well-known/pytp", "pkgs.example.com", "?discover="},
          std::tuple{"/.well-known/pytp?discover=%2Flegacy%2F", "evil\"host", "send a Host header"}}) {
        const auto refused = server.get(target, {{http::field::host, host}});
        CHECK(refused.result_int() == 404);
        CHECK(refused[http::field::content_type] == "application/problem+json");
        const auto problem = json::parse(refused.body()).as_object();
        const auto& error = problem.at("errors").as_array().at(0).as_object();
        CHECK(error.at("code") == "not-found");
        CHECK_THAT(std::string(error.at("description").as_string()), Catch::Contains(fix));
    }
}
