#include <catch2/catch.hpp>

#include <thread>
#include <vector>

#include "wheelhouse/metrics/histogram.hpp"
#include "wheelhouse/metrics/route.hpp"
#include "wheelhouse/metrics/server_metrics.hpp"
#include "wheelhouse/metrics/text_format.hpp"

using namespace wheelhouse::metrics;
using namespace std::chrono_literals;

namespace {

bool contains_line(const std::string& text, const std::string& line) {
    return text.find("\n" + line + "\n") != std::string::npos || text.starts_with(line + "\n");
}

}  // namespace

TEST_CASE("metrics: route labels", "[metrics]") {
    CHECK(to_string(route::static_files) == "static");
    CHECK(to_string(route::simple_project) == "simple_project");
}

TEST_CASE("metrics: help text and label values are escaped as the exposition format asks", "[metrics]") {
    CHECK(escape_help("a\\b\nc \"quoted\"") == "a\\\\b\\nc \"quoted\"");
    CHECK(escape_label_value("a\\b\nc \"quoted\"") == "a\\\\b\\nc \\\"quoted\\\"");
    CHECK(escape_label_value("plain") == "plain");
}

TEST_CASE("metrics: sample values", "[metrics]") {
    CHECK(format_value(0.0) == "0");
    CHECK(format_value(0.25) == "0.25");
    CHECK(format_value(50 / 1e6) == "5e-05");
    CHECK(format_value(3.0) == "3");
    CHECK(format_value(1.0 / 0.0) == "+Inf");
    CHECK(format_value(-1.0 / 0.0) == "-Inf");
    CHECK(format_value(0.0 / 0.0) == "NaN");
}

TEST_CASE("metrics: a family writes HELP and TYPE, then its samples", "[metrics]") {
    text_writer out;
    out.family("demo_requests_total", "Requests.\nSecond line.", metric_type::counter);
    out.sample("demo_requests_total", {{"route", "a\"b"}, {"status", "200"}}, std::uint64_t{18446744073709551615ull});
    out.sample("demo_requests_total", {}, std::uint64_t{0});
    out.family("demo_seconds", "Time.", metric_type::gauge);
    out.sample("demo_seconds", {}, 1.5);
    CHECK(out.text() ==
          "# HELP demo_requests_total Requests.\\nSecond line.\n"
          "# TYPE demo_requests_total counter\n"
          "demo_requests_total{route=\"a\\\"b\",status=\"200\"} 18446744073709551615\n"
          "demo_requests_total 0\n"
          "# HELP demo_seconds Time.\n"
          "# TYPE demo_seconds gauge\n"
          "demo_seconds 1.5\n");
}

TEST_CASE("metrics: histogram buckets are cumulative and inclusive of their bound", "[metrics]") {
    histogram latency({100, 1000, 10000});
    for (std::uint64_t value : {0, 100, 101, 1000, 5000, 10001, 99999}) latency.observe(value);
    const auto read = latency.read();
    CHECK(read.cumulative == std::vector<std::uint64_t>{2, 4, 5, 7});
    CHECK(read.count() == 7);
    CHECK(read.sum == 0 + 100 + 101 + 1000 + 5000 + 10001 + 99999);

    text_writer out;
    latency.render(out, "demo_seconds", {{"route", "files"}}, 1e6);
    CHECK(out.text() ==
          "demo_seconds_bucket{route=\"files\",le=\"1e-04\"} 2\n"
          "demo_seconds_bucket{route=\"files\",le=\"0.001\"} 4\n"
          "demo_seconds_bucket{route=\"files\",le=\"0.01\"} 5\n"
          "demo_seconds_bucket{route=\"files\",le=\"+Inf\"} 7\n"
          "demo_seconds_sum{route=\"files\"} 0.116201\n"
          "demo_seconds_count{route=\"files\"} 7\n");
}

TEST_CASE("metrics: counters lose nothing under concurrent recording", "[metrics]") {
    server_metrics metrics;
    constexpr int threads = 4, per_thread = 20000;
    std::vector<std::thread> workers;
    for (int t = 0; t < threads; ++t) {
        workers.emplace_back([&] {
            for (int i = 0; i < per_thread; ++i) metrics.record_request(route::simple_project, 200, 10, 30us);
        });
    }
    for (auto& worker : workers) worker.join();
    CHECK(metrics.requests(route::simple_project, 200) == threads * per_thread);
    const auto page = metrics.render({});
    CHECK(contains_line(page, "wheelhouse_http_requests_total{route=\"simple_project\",status=\"200\"} 80000"));
    CHECK(contains_line(page, "wheelhouse_http_response_bytes_total{route=\"simple_project\"} 800000"));
    CHECK(contains_line(page, "wheelhouse_http_request_duration_seconds_count{route=\"simple_project\"} 80000"));
    CHECK(contains_line(page, "wheelhouse_http_request_duration_seconds_bucket{route=\"simple_project\",le=\"5e-05\"} 80000"));
}

TEST_CASE("metrics: the page holds every family, levels as given and unused counters at 0", "[metrics]") {
    server_metrics metrics;
    metrics.record_request(route::upload, 201, 120, 2500us);
    metrics.record_request(route::other, 404, 40, 10us);
    metrics.record_request(route::other, 999, 0, 10us);
    metrics.record_ingest(ingest_outcome::created, 2ms);
    metrics.record_ingest(ingest_outcome::conflict, 3ms);
    metrics.record_ingest(ingest_outcome::conflict, 4ms);
    metrics.record_ingest(ingest_outcome::busy);
    metrics.record_proxy_upstream_error();

    scrape_levels levels;
    levels.ingest_queue_depth = 3;
    levels.ingest_queue_capacity = 16;
    levels.catalog_projects = 7;
    levels.catalog_files = 1234;
    levels.page_cache_hits = 90;
    levels.page_cache_misses = 10;
    levels.page_cache_entries = 12;
    levels.page_cache_bytes = 4096;
    const auto page = metrics.render(levels);

    for (const auto* line : {
             "wheelhouse_http_requests_total{route=\"upload\",status=\"201\"} 1",
             "wheelhouse_http_requests_total{route=\"other\",status=\"404\"} 1",
             "wheelhouse_http_requests_total{route=\"other\",status=\"other\"} 1",
             "wheelhouse_http_response_bytes_total{route=\"upload\"} 120",
             "wheelhouse_http_response_bytes_total{route=\"healthz\"} 0",
             "wheelhouse_http_request_duration_seconds_bucket{route=\"upload\",le=\"0.001\"} 0",
             "wheelhouse_http_request_duration_seconds_bucket{route=\"upload\",le=\"0.0025\"} 1",
             "wheelhouse_ingests_total{outcome=\"created\"} 1",
             "wheelhouse_ingests_total{outcome=\"conflict\"} 2",
             "wheelhouse_ingests_total{outcome=\"busy\"} 1",
             "wheelhouse_ingests_total{outcome=\"failed\"} 0",
             "wheelhouse_ingest_duration_seconds_count 3",
             "wheelhouse_ingest_duration_seconds_sum 0.009",
             "wheelhouse_ingest_queue_depth 3",
             "wheelhouse_ingest_queue_capacity 16",
             "wheelhouse_catalog_projects 7",
             "wheelhouse_catalog_files 1234",
             "wheelhouse_page_cache_hits_total 90",
             "wheelhouse_page_cache_misses_total 10",
             "wheelhouse_page_cache_entries 12",
             "wheelhouse_page_cache_bytes 4096",
             "wheelhouse_proxy_upstream_errors_total 1",
             "# TYPE wheelhouse_http_request_duration_seconds histogram",
         }) {
        INFO(line);
        CHECK(contains_line(page, line));
    }
    CHECK(page.find("status=\"200\"") == std::string::npos);  // never answered: no series
    CHECK(page.find("/api/v1/files") == std::string::npos);   // no raw path becomes a label

    // Without a readable catalog its gauges are left out rather than shown as 0.
    const auto without_catalog = server_metrics().render({});
    CHECK(without_catalog.find("wheelhouse_catalog_files") == std::string::npos);
    CHECK(contains_line(without_catalog, "wheelhouse_proxy_upstream_errors_total 0"));
}
