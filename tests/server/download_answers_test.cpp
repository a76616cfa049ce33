// Every answer to a download (200, 206, 304, 416, HEAD, of a wheel and of its .metadata) carries
// one header set, from the one conditional/Range responder (app/download_answer.hpp).
// tests/e2e/test_remote_downloads.py compares a proxied file's answers with these.

#include <catch2/catch.hpp>

#include <set>
#include <string>

#include "test_server.hpp"

namespace wheelhouse::testing {
namespace {

constexpr std::string_view wheel_name = "answers-1.0-py3-none-any.whl";

std::set<std::string> names_of(const http_response& response) {
    std::set<std::string> names;
    for (const auto& field : response) names.insert(std::string(field.name_string()));
    return names;
}

const std::set<std::string> every_answer = {"Server", "ETag", "Cache-Control", "Accept-Ranges"};

void check_common(const http_response& response, const std::string& etag) {
    INFO("status " << response.result_int());
    for (const auto& name : every_answer) CHECK(names_of(response).count(name) == 1);
    CHECK(response[http::field::server] == "wheelhouse");
    CHECK(response[http::field::etag] == etag);
    CHECK(response[http::field::cache_control] == "max-age=31536000, public, immutable");
    CHECK(response[http::field::accept_ranges] == "bytes");
}

}  // namespace

TEST_CASE("download answers: 200, 206, 304, 416 and HEAD carry one header set", "[server][files]") {
    test_server server;
    const auto wheel = make_wheel("answers", "1.0");
    const auto file = server.ingest(wheel, wheel_name);

    struct target {
        std::string url;
        std::string etag;
    };
    const target targets[] = {
        {"/files/" + file.sha256 + "/" + std::string(wheel_name), "\"" + file.sha256 + "\""},
        {"/files/" + file.sha256 + "/" + std::string(wheel_name) + ".metadata", "\"" + file.metadata_sha256 + "\""},
    };
    for (const auto& [url, etag] : targets) {
        INFO(url);
        const auto whole = server.get(url);
        REQUIRE(whole.result_int() == 200);
        check_common(whole, etag);
        CHECK(whole[http::field::content_type] == "application/octet-stream");
        CHECK(names_of(whole).count("Content-Range") == 0);

        const auto part = server.get(url, {{http::field::range, "bytes=0-9"}});
        REQUIRE(part.result_int() == 206);
        check_common(part, etag);
        CHECK(part[http::field::content_range].starts_with("bytes 0-9/"));
        CHECK(part.body() == whole.body().substr(0, 10));

        const auto current = server.get(url, {{http::field::if_none_match, etag}});
        REQUIRE(current.result_int() == 304);
        check_common(current, etag);
        CHECK(current.body().empty());

        const auto outside = server.get(url, {{http::field::range, "bytes=99999999-"}});
        REQUIRE(outside.result_int() == 416);
        check_common(outside, etag);
        CHECK(outside[http::field::content_range] == "bytes */" + std::to_string(whole.body().size()));

        const auto head = server.request(http::verb::head, url);
        REQUIRE(head.result_int() == 200);
        check_common(head, etag);
        CHECK(head[http::field::content_length] == std::to_string(whole.body().size()));
        // HEAD says what GET would: the same fields, names and values, but the date-free body.
        CHECK(names_of(head) == names_of(whole));

        const auto ranged_head =
            server.request(http::verb::head, url, {{http::field::range, "bytes=0-9"}}, std::string());
        REQUIRE(ranged_head.result_int() == 206);
        CHECK(names_of(ranged_head) == names_of(part));
        CHECK(ranged_head[http::field::content_range] == part[http::field::content_range]);
    }
}

}  // namespace wheelhouse::testing
