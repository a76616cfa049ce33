#include <catch2/catch.hpp>

#include <atomic>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>

#include <boost/json.hpp>
#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>

#include "test_server.hpp"
#include "wheelhouse/auth/token_store.hpp"

using namespace wheelhouse;
using namespace wheelhouse::testing;

namespace {

// The server's log while it lives; construct it before the server and let it outlive it.
class log_capture {
public:
    log_capture() : previous_(spdlog::default_logger()) {
        auto sink = std::make_shared<spdlog::sinks::ostream_sink_mt>(text_);
        spdlog::set_default_logger(std::make_shared<spdlog::logger>("capture", std::move(sink)));
    }
    ~log_capture() { spdlog::set_default_logger(previous_); }
    log_capture(const log_capture&) = delete;
    log_capture& operator=(const log_capture&) = delete;
    std::string text() {
        spdlog::default_logger()->flush();
        return text_.str();
    }

private:
    std::ostringstream text_;
    std::shared_ptr<spdlog::logger> previous_;
};

std::size_t count(const std::string& text, std::string_view what) {
    std::size_t found = 0;
    for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++found;
    return found;
}

std::string make_token(test_server& server, std::string_view name, auth::scope scope,
                       std::vector<std::string> projects = {}) {
    auth::token_store tokens(server.catalog());
    auto created = tokens.create(name, scope, projects, std::nullopt, "test");
    REQUIRE(created);
    return created->secret;
}

app::route_answer throws(app::route_context&, app::route_request&) { throw std::runtime_error("the test's handler broke"); }

app::route thrower(std::string_view pattern, app::lane runs_on) {
    return {app::GET, pattern, app::access::anyone, app::project_scope::none, "", app::audience::package_tools,
            app::body_kind::none, runs_on, metrics::route::other, throws};
}

std::vector<std::string> names_in(const boost::json::array& projects, std::string_view key) {
    std::vector<std::string> names;
    for (const auto& project : projects) names.emplace_back(project.at(key).as_string());
    return names;
}

}  // namespace

TEST_CASE("dispatch: a handler that throws ends its own connection with a 500, logged once, others are served",
          "[server][dispatch]") {
    log_capture log;
    server_settings settings;
    settings.extra_routes = {thrower("/test/throws-inline", app::lane::io_thread),
                             thrower("/test/throws-on-a-worker", app::lane::read_pool)};
    test_server server(settings);
    server.ingest(make_wheel("kernels", "1.0"), "kernels-1.0-py3-none-any.whl");

    for (const std::string_view path : {"/test/throws-inline", "/test/throws-on-a-worker"}) {
        CAPTURE(path);
        // Two requests on one connection: the 500 closes it, so the second is never answered.
        const auto answer = server.raw("GET " + std::string(path) + " HTTP/1.1\r\nHost: x\r\n\r\n"
                                       "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n");
        CHECK_THAT(answer, Catch::StartsWith("HTTP/1.1 500"));
        CHECK_THAT(answer, Catch::Contains("Connection: close"));
        CHECK_THAT(answer, Catch::Contains("the administrator has the details in the log"));
        CHECK_THAT(answer, !Catch::Contains("the test's handler broke"));
        CHECK(count(answer, "HTTP/1.1 ") == 1);
    }
    const auto logged = log.text();
    CAPTURE(logged);
    CHECK(count(logged, "the handler threw: the test's handler broke") == 2);
    CHECK(count(logged, "GET /test/throws-inline: from 127.0.0.1: the handler threw") == 1);
    CHECK(count(logged, "GET /test/throws-on-a-worker: from 127.0.0.1: the handler threw") == 1);

    // Throwing handlers on both kinds of thread, while other clients are served throughout.
    std::atomic<bool> stop{false};
    std::atomic<int> thrown{0};
    std::thread breaker([&] {
        while (!stop) {
            if (server.get("/test/throws-inline").result_int() == 500) ++thrown;
            if (server.get("/test/throws-on-a-worker").result_int() == 500) ++thrown;
        }
    });
    int served = 0;
    for (int i = 0; i < 50; ++i) {
        served += server.get("/healthz").result_int() == 200;
        served += server.get("/simple/kernels/").result_int() == 200;
    }
    stop = true;
    breaker.join();
    CHECK(served == 100);
    CHECK(thrown >= 2);
}

TEST_CASE("dispatch: credentials are checked from the headers, before any body is read", "[server][dispatch]") {
    server_settings settings;
    settings.app.private_index = true;
    test_server server(settings);
    // Each announces a body it never sends: the answer comes from the headers alone, at once.
    const std::string requests[] = {
        "POST /api/v1/files/kernels-1.0-py3-none-any.whl/yank HTTP/1.1\r\nHost: x\r\nContent-Length: 60000\r\n\r\n",
        "POST /api/v1/tokens HTTP/1.1\r\nHost: x\r\nContent-Length: 60000\r\n\r\n",
        "POST /api/v1/remote HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n",
        "GET /simple/ HTTP/1.1\r\nHost: x\r\nContent-Length: 60000\r\n\r\n",
        "GET /api/v1/projects HTTP/1.1\r\nHost: x\r\nContent-Length: 60000\r\n\r\n",
        "PUT /api/v1/files/kernels-1.0-py3-none-any.whl HTTP/1.1\r\nHost: x\r\nContent-Length: 60000\r\n\r\n",
    };
    for (const auto& request : requests) {
        CAPTURE(request);
        const auto started = std::chrono::steady_clock::now();
        const auto answer = server.raw(request, std::chrono::milliseconds(2000));
        CHECK_THAT(answer, Catch::StartsWith("HTTP/1.1 401"));
        CHECK(std::chrono::steady_clock::now() - started < std::chrono::milliseconds(1500));  // closed, not waited out
    }
    // Without a body to leave unread, a refusal keeps the connection for the next request.
    const auto kept = server.raw("GET /simple/ HTTP/1.1\r\nHost: x\r\n\r\nGET /healthz HTTP/1.1\r\nHost: x\r\n\r\n",
                                 std::chrono::milliseconds(1000));
    CHECK_THAT(kept, Catch::StartsWith("HTTP/1.1 401"));
    CHECK_THAT(kept, Catch::Contains("HTTP/1.1 200"));
}

TEST_CASE("dispatch: lists and searches show a project-limited token only its projects", "[server][dispatch]") {
    server_settings settings;
    settings.app.private_index = true;
    test_server server(settings);
    for (const std::string name : {"kernels", "kernelsplus", "other", "zeta"})
        server.ingest(make_wheel(name, "1.0"), name + "-1.0-py3-none-any.whl");
    const auto limited = "Bearer " + make_token(server, "kernels-team", auth::scope::read, {"kernels*"});
    const auto everything = "Bearer " + make_token(server, "team", auth::scope::read);
    const auto json = std::pair{http::field::accept, std::string_view("application/vnd.pypi.simple.v1+json")};

    for (const std::string_view index : {"/simple/", "/variants/cu130/simple/"}) {
        CAPTURE(index);
        const auto mine = server.get(index, {{http::field::authorization, limited}, json});
        REQUIRE(mine.result_int() == 200);
        CHECK(names_in(boost::json::parse(mine.body()).at("projects").as_array(), "name") ==
              std::vector<std::string>{"kernels", "kernelsplus"});
        const auto html = server.get(index, {{http::field::authorization, limited}});
        CHECK_THAT(html.body(), Catch::Contains("\"kernels/\"") && !Catch::Contains("other") && !Catch::Contains("zeta"));
        const auto all = server.get(index, {{http::field::authorization, everything}, json});
        CHECK(names_in(boost::json::parse(all.body()).at("projects").as_array(), "name") ==
              std::vector<std::string>{"kernels", "kernelsplus", "other", "zeta"});
        // The filtered list is cached apart: the full one again, then the filtered one again.
        CHECK(server.get(index, {{http::field::authorization, limited}, json}).body() == mine.body());
    }

    const auto listed = server.get("/api/v1/projects", {{http::field::authorization, limited}});
    REQUIRE(listed.result_int() == 200);
    const auto page = boost::json::parse(listed.body()).as_object();
    CHECK(page.at("total") == 2);
    CHECK(names_in(page.at("projects").as_array(), "name") == std::vector<std::string>{"kernels", "kernelsplus"});
    const auto searched = boost::json::parse(server.get("/api/v1/projects?q=e&sort=recent",
                                                        {{http::field::authorization, limited}}).body()).as_object();
    CHECK(searched.at("total") == 2);
    CHECK(server.get("/api/v1/projects/other", {{http::field::authorization, limited}}).result_int() == 403);
    CHECK(server.get("/api/v1/files/other-1.0-py3-none-any.whl", {{http::field::authorization, limited}}).result_int() ==
          403);
    CHECK(server.get("/api/v1/projects/kernels", {{http::field::authorization, limited}}).result_int() == 200);
}

TEST_CASE("dispatch: a public index lists every project, whoever asks", "[server][dispatch]") {
    test_server server;
    server.ingest(make_wheel("kernels", "1.0"), "kernels-1.0-py3-none-any.whl");
    server.ingest(make_wheel("other", "1.0"), "other-1.0-py3-none-any.whl");
    const auto limited = "Bearer " + make_token(server, "kernels-team", auth::scope::read, {"kernels"});
    // Anyone may read a public index, so a limited token hides nothing there.
    CHECK(boost::json::parse(server.get("/api/v1/projects").body()).at("total") == 2);
    CHECK(boost::json::parse(server.get("/api/v1/projects", {{http::field::authorization, limited}}).body()).at("total") == 2);
}

TEST_CASE("dispatch: /metrics on a private index needs a token for every project, /healthz stays open",
          "[server][dispatch]") {
    server_settings settings;
    settings.app.private_index = true;
    test_server server(settings);
    const auto scraper = make_token(server, "prometheus", auth::scope::read);
    const auto limited = make_token(server, "kernels-team", auth::scope::read, {"kernels"});
    const auto anonymous = server.get("/metrics");
    CHECK(anonymous.result_int() == 401);
    CHECK(anonymous[http::field::www_authenticate] == "Basic realm=\"wheelhouse\"");
    CHECK(server.get("/metrics", {{http::field::authorization, "Bearer " + limited}}).result_int() == 403);
    const auto scraped = server.get("/metrics", {{http::field::authorization, "Bearer " + scraper}});
    CHECK(scraped.result_int() == 200);
    CHECK_THAT(scraped.body(), Catch::Contains("wheelhouse_http_requests_total"));
    CHECK(server.get("/healthz").result_int() == 200);
    CHECK(server.get("/").result_int() == 200);
    CHECK(server.get("/static/js/app.mjs").result_int() == 200);
}
