// Every answer to a download (200, 206, 304, 416, HEAD, of a wheel, of its .metadata and of a
// release's PEP 825 variants.json) carries one header set, from the one conditional/Range
// responder (app/download_answer.hpp).
// tests/e2e/test_remote_downloads.py compares a proxied file's answers with these.

#include <catch2/catch.hpp>

#include <set>
#include <string>

#include "test_server.hpp"
#include "wheelhouse/http/conditional.hpp"

namespace wheelhouse::testing {
namespace {

constexpr std::string_view wheel_name = "answers-1.0-py3-none-any.whl";

std::set<std::string> names_of(const http_response& response) {
    std::set<std::string> names;
    for (const auto& field : response) names.insert(std::string(field.name_string()));
    return names;
}

const std::set<std::string> every_answer = {"Server", "ETag", "Last-Modified", "Cache-Control", "Accept-Ranges"};

// A variant wheel of answers 1.0, so that the release has a variants.json.
std::string make_variant_wheel() {
    wheel_spec spec;
    spec.dist_info = "answers-1.0.dist-info";
    spec.metadata = "Metadata-Version: 2.1\nName: answers\nVersion: 1.0\nSummary: A variant\n\nLong description.\n";
    spec.files = {{"answers/__init__.py", "VERSION = '1.0'\n"},
                  {"answers-1.0.dist-info/variant.json",
                   R"({"$schema": "https://variants-schema.wheelnext.dev/peps/825/v0.1.1.json", )"
                   R"("default-priorities": {"namespace": ["nvidia"]}, )"
                   R"("variants": {"cu128": {"nvidia": {"cuda_version_lower_bound": ["12.8"]}}}})"}};
    return build_wheel(spec);
}

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
    server.ingest(make_variant_wheel(), "answers-1.0-py3-none-any-cu128.whl");
    const auto project = server.catalog().files_of_project("answers");
    REQUIRE(project);
    REQUIRE(*project);
    REQUIRE((*project)->release_variants.size() == 1);
    const auto& variants = (*project)->release_variants.front();

    struct target {
        std::string url;
        std::string etag;
        std::string_view content_type;
    };
    const target targets[] = {
        {"/files/" + file.sha256 + "/" + std::string(wheel_name), "\"" + file.sha256 + "\"",
         "application/octet-stream"},
        {"/files/" + file.sha256 + "/" + std::string(wheel_name) + ".metadata", "\"" + file.metadata_sha256 + "\"",
         "application/octet-stream"},
        {"/files/" + variants.sha256 + "/" + variants.filename, "\"" + variants.sha256 + "\"", "application/json"},
    };
    for (const auto& [url, etag, content_type] : targets) {
        INFO(url);
        const auto whole = server.get(url);
        REQUIRE(whole.result_int() == 200);
        check_common(whole, etag);
        CHECK(whole[http::field::content_type] == content_type);
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

        // If-Modified-Since at or after Last-Modified: 304; before it: 200; with an If-None-Match
        // that does not match, the If-None-Match decides (RFC 9110 §13.2.2).
        const auto stamp = std::string(whole[http::field::last_modified]);
        const auto stamped = http_conditional::parse_http_date(stamp);
        REQUIRE(stamped);
        CHECK(server.get(url, {{http::field::if_modified_since, stamp}}).result_int() == 304);
        const auto earlier = http_conditional::http_date(*stamped - 1);
        CHECK(server.get(url, {{http::field::if_modified_since, earlier}}).result_int() == 200);
        CHECK(server.get(url, {{http::field::if_modified_since, stamp}, {http::field::if_none_match, "\"other\""}})
                  .result_int() == 200);
        CHECK(server.get(url, {{http::field::if_modified_since, "not a date"}}).result_int() == 200);
        const auto dated = server.get(url, {{http::field::if_modified_since, stamp}});
        check_common(dated, etag);

        const auto outside = server.get(url, {{http::field::range, "bytes=99999999-"}});
        REQUIRE(outside.result_int() == 416);
        check_common(outside, etag);
        CHECK(outside[http::field::content_range] == "bytes */" + std::to_string(whole.body().size()));

        // If-Range with another validator: the client's part is stale, so the whole answer.
        const auto stale = server.get(url, {{http::field::range, "bytes=0-9"}, {http::field::if_range, "\"other\""}});
        REQUIRE(stale.result_int() == 200);
        CHECK(stale.body() == whole.body());

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
    CHECK(server.get(targets[2].url).body() == variants.content);
}

}  // namespace wheelhouse::testing
