#include <catch2/catch.hpp>

#include <boost/json.hpp>

#include "test_server.hpp"
#include "wheelhouse/auth/token_store.hpp"

using namespace wheelhouse;
using namespace wheelhouse::testing;

namespace {

std::string error_of(const http_response& response) {
    INFO(response.body());
    CHECK(response[http::field::content_type] == "application/json");
    return std::string(boost::json::parse(response.body()).as_object().at("error").as_string());
}

std::string make_token(test_server& server, std::string_view name, auth::scope scope,
                       std::vector<std::string> projects = {}) {
    auth::token_store tokens(server.catalog());
    auto created = tokens.create(name, scope, projects, std::nullopt, "test");
    REQUIRE(created);
    return created->secret;
}

constexpr std::string_view release_url = "https://github.com/o/r/releases/download/v1/demo-1.0-py3-none-any.whl";

}  // namespace

// What is refused before anything is fetched: no request leaves the server for these.
TEST_CASE("remote routes: credentials, bodies and URLs are checked before any fetch", "[server][remote]") {
    test_server server;
    const auto upload = "Bearer " + make_token(server, "ci", auth::scope::upload);
    const auto scoped = "Bearer " + make_token(server, "other", auth::scope::upload, {"other"});
    const auto reader = "Bearer " + make_token(server, "reader", auth::scope::read);
    auto post = [&](std::string_view target, const std::string& authorization, std::string body) {
        return server.request(http::verb::post, target, {{http::field::authorization, authorization}}, std::move(body));
    };
    const std::string body = "{\"url\": \"" + std::string(release_url) + "\"}";

    const auto anonymous = server.request(http::verb::post, "/api/v1/remote", {}, body);
    CHECK(anonymous.result_int() == 401);
    CHECK_THAT(error_of(anonymous), Catch::Contains("registrations of remote files need an API token"));
    CHECK(post("/api/v1/remote", reader, body).result_int() == 403);
    const auto elsewhere = post("/api/v1/remote", scoped, body);
    CHECK(elsewhere.result_int() == 403);
    CHECK(error_of(elsewhere) == "token 'other' may not upload to project 'demo'");

    const auto get = server.get("/api/v1/import/github", {{http::field::authorization, upload}});
    CHECK(get.result_int() == 405);
    CHECK(get[http::field::allow] == "POST");

    const auto not_json = post("/api/v1/remote", upload, "{url");
    CHECK(not_json.result_int() == 400);
    CHECK_THAT(error_of(not_json), Catch::StartsWith("the body is not JSON"));
    const auto no_url = post("/api/v1/remote", upload, "{}");
    CHECK(no_url.result_int() == 400);
    CHECK_THAT(error_of(no_url), Catch::StartsWith("give the asset's URL"));
    const auto bad_mode = post("/api/v1/remote", upload, "{\"url\": \"" + std::string(release_url) + "\", \"mode\": \"local\"}");
    CHECK(bad_mode.result_int() == 400);
    CHECK(error_of(bad_mode) == "'mode' is 'local'; give redirect, proxy or cache");
    const auto bad_verify = post("/api/v1/remote", upload, "{\"url\": \"" + std::string(release_url) + "\", \"verify\": 1}");
    CHECK(error_of(bad_verify) == "'verify' must be true or false");

    const auto not_wheel = post("/api/v1/remote", upload, R"({"url": "https://github.com/o/r/releases/download/v1/notes.txt"})");
    CHECK(not_wheel.result_int() == 400);
    CHECK_THAT(error_of(not_wheel), Catch::StartsWith("the URL must end in a wheel's or an sdist's filename (PEP 427, PEP 625): "));
    const auto bad_digest = post("/api/v1/remote", upload, "{\"url\": \"" + std::string(release_url) + "\", \"sha256\": \"xyz\"}");
    CHECK(bad_digest.result_int() == 400);
    CHECK(error_of(bad_digest) == "sha256 \"xyz\" is not 64 hexadecimal digits");

    const auto off_list = post("/api/v1/remote", upload, R"({"url": "https://example.com/d/demo-1.0-py3-none-any.whl"})");
    CHECK(off_list.result_int() == 400);
    CHECK_THAT(error_of(off_list), Catch::Contains("example.com"));

    const auto bad_repository = post("/api/v1/import/github", upload, R"({"repository": "o", "tag": "v1"})");
    CHECK(bad_repository.result_int() == 400);
    CHECK_THAT(error_of(bad_repository), Catch::Contains("give it as OWNER/REPO"));
    const auto no_tag = post("/api/v1/import/github", upload, R"({"repository": "o/r"})");
    CHECK(no_tag.result_int() == 400);

    auto files = server.catalog().find_file("demo-1.0-py3-none-any.whl");
    REQUIRE(files);
    CHECK_FALSE(*files);
}
