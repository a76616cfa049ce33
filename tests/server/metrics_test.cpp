#include <catch2/catch.hpp>

#include <thread>

#include "test_server.hpp"
#include "wheelhouse/auth/token_store.hpp"

using namespace wheelhouse;
using namespace wheelhouse::testing;

namespace {

// The value of the one sample line that starts with `series` ("name{labels}"), or -1.
double sample(const std::string& page, const std::string& series) {
    const auto at = page.find("\n" + series + " ");
    if (at == std::string::npos) return -1;
    return std::stod(page.substr(at + series.size() + 2));
}


// A request is counted once its last byte is written, which may be just after the client has
// read it: scrape until each series reaches its count, or a second has passed.
http_response scrape_until(test_server& server, std::initializer_list<std::pair<std::string, double>> counts) {
    auto reached = [&](const std::string& text) {
        for (const auto& [name, at_least] : counts)
            if (sample(text, name) < at_least) return false;
        return true;
    };
    auto response = server.get("/metrics");
    for (int attempt = 0; attempt < 100 && !reached(response.body()); ++attempt) {
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
        response = server.get("/metrics");
    }
    return response;
}

}  // namespace

TEST_CASE("server: /metrics counts requests by route and status, ingests, and cache hits", "[server][metrics]") {
    test_server server;
    auth::token_store tokens(server.catalog());
    auto token = tokens.create("ci", auth::scope::upload, {}, std::nullopt, "test");
    REQUIRE(token);
    const auto authorization = "Bearer " + token->secret;

    const auto filename = std::string("cupy-13.6.0-cp313-cp313-manylinux2014_x86_64.whl");
    const auto wheel = make_wheel("cupy", "13.6.0");
    CHECK(server.request(http::verb::put, "/api/v1/files/" + filename, {{http::field::authorization, authorization}},
                         wheel)
              .result_int() == 201);
    CHECK(server.request(http::verb::put, "/api/v1/files/" + filename, {{http::field::authorization, authorization}},
                         wheel)
              .result_int() == 200);
    CHECK(server.request(http::verb::put, "/api/v1/files/" + filename, {{http::field::authorization, authorization}},
                         make_wheel("cupy", "13.6.0", "other bytes"))
              .result_int() == 409);
    CHECK(server.request(http::verb::put, "/api/v1/files/cupy-1.0-py3-none-any.whl",
                         {{http::field::authorization, authorization}}, "not a zip")
              .result_int() == 400);

    const auto page = server.get("/simple/cupy/");
    CHECK(page.result_int() == 200);
    CHECK(server.get("/simple/cupy/").result_int() == 200);
    CHECK(server.get("/simple/no-such-project/").result_int() == 404);
    CHECK(server.get("/healthz").result_int() == 200);

    const auto response = scrape_until(
        server, {{"wheelhouse_http_requests_total{route=\"upload\",status=\"400\"}", 1},
                 {"wheelhouse_http_requests_total{route=\"simple_project\",status=\"200\"}", 2},
                 {"wheelhouse_http_requests_total{route=\"simple_project\",status=\"404\"}", 1},
                 {"wheelhouse_http_requests_total{route=\"healthz\",status=\"200\"}", 1}});
    REQUIRE(response.result_int() == 200);
    CHECK(response[http::field::content_type] == "text/plain; version=0.0.4; charset=utf-8");
    CHECK(response[http::field::cache_control] == "no-store");
    const auto& text = response.body();

    CHECK(sample(text, "wheelhouse_http_requests_total{route=\"upload\",status=\"201\"}") == 1);
    CHECK(sample(text, "wheelhouse_http_requests_total{route=\"upload\",status=\"200\"}") == 1);
    CHECK(sample(text, "wheelhouse_http_requests_total{route=\"upload\",status=\"409\"}") == 1);
    CHECK(sample(text, "wheelhouse_http_requests_total{route=\"upload\",status=\"400\"}") == 1);
    CHECK(sample(text, "wheelhouse_http_requests_total{route=\"simple_project\",status=\"200\"}") == 2);
    CHECK(sample(text, "wheelhouse_http_requests_total{route=\"simple_project\",status=\"404\"}") == 1);
    CHECK(sample(text, "wheelhouse_http_requests_total{route=\"healthz\",status=\"200\"}") == 1);
    CHECK(sample(text, "wheelhouse_http_request_duration_seconds_count{route=\"simple_project\"}") == 3);
    CHECK(sample(text, "wheelhouse_http_response_bytes_total{route=\"simple_project\"}") >=
          2.0 * static_cast<double>(page.body().size()));
    CHECK(sample(text, "wheelhouse_ingests_total{outcome=\"created\"}") == 1);
    CHECK(sample(text, "wheelhouse_ingests_total{outcome=\"identical\"}") == 1);
    CHECK(sample(text, "wheelhouse_ingests_total{outcome=\"conflict\"}") == 1);
    CHECK(sample(text, "wheelhouse_ingests_total{outcome=\"invalid\"}") == 1);
    CHECK(sample(text, "wheelhouse_ingest_duration_seconds_count") == 4);
    CHECK(sample(text, "wheelhouse_catalog_projects") == 1);
    CHECK(sample(text, "wheelhouse_catalog_files") == 1);
    CHECK(sample(text, "wheelhouse_page_cache_hits_total") == 1);
    CHECK(sample(text, "wheelhouse_page_cache_misses_total") >= 2);  // the first cupy page and the unknown project
    CHECK(sample(text, "wheelhouse_ingest_queue_depth") == 0);
    CHECK(sample(text, "wheelhouse_proxy_upstream_errors_total") == 0);
    CHECK(text.find("cupy") == std::string::npos);  // no path or project name became a label

    // The scrape itself is counted once its response is written.
    const auto again = scrape_until(server, {{"wheelhouse_http_requests_total{route=\"metrics\",status=\"200\"}", 1}});
    CHECK(sample(again.body(), "wheelhouse_http_requests_total{route=\"metrics\",status=\"200\"}") >= 1);
}

TEST_CASE("server: /metrics answers reads only", "[server][metrics]") {
    test_server server;
    const auto refused = server.request(http::verb::post, "/metrics");
    CHECK(refused.result_int() == 405);
    CHECK(refused[http::field::allow] == "GET, HEAD");
    const auto head = server.request(http::verb::head, "/metrics");
    CHECK(head.result_int() == 200);
    CHECK(head.body().empty());
}
