// Whatever a request or a handler throws ends that connection (with a 500 when nothing of a
// response was written yet), and nothing else.

#include <catch2/catch.hpp>

#include <thread>
#include <vector>

#include "echo_server.hpp"
#include "test_server.hpp"

using namespace wheelhouse;
using namespace wheelhouse::testing;
using namespace std::chrono_literals;

namespace {

std::string post(unsigned short port, std::string_view target, std::string_view body = "hello") {
    return raw_exchange(port, "POST " + std::string(target) + " HTTP/1.1\r\nHost: x\r\nConnection: close\r\n" +
                                  "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + std::string(body));
}

}  // namespace

TEST_CASE("server: an exception from a handler ends its own connection with 500", "[server][transport][exceptions]") {
    echo_server server;
    // Another client in the middle of its request on the same server, before and after.
    raw_client bystander(server.port());
    bystander.send("POST /echo HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Length: 10\r\n\r\nhello");
    for (const char* target : {"/throw/plan", "/throw/handle", "/throw/sink"}) {
        CAPTURE(target);
        const auto answer = post(server.port(), target);
        CHECK_THAT(answer, Catch::StartsWith("HTTP/1.1 500"));
        CHECK_THAT(answer, Catch::Contains("the server failed on this request and logged why"));
        CHECK_THAT(answer, Catch::Contains("Connection: close"));
        CHECK(count_responses(answer) == 1);
    }
    bystander.send("world");
    const auto answer = bystander.receive(2s);
    CHECK_THAT(answer, Catch::StartsWith("HTTP/1.1 200"));
    CHECK_THAT(answer, Catch::Contains("body: 10"));
}

TEST_CASE("server: a handler that throws outside any connection does not stop the I/O thread",
          "[server][transport][exceptions]") {
    transport::session_limits limits;
    echo_server server(limits);
    for (int i = 0; i < 4; ++i) net::post(server.server().context(), [] { throw std::runtime_error("stray"); });
    std::this_thread::sleep_for(50ms);
    // The first context also accepts: every new connection passes through it.
    for (int i = 0; i < 4; ++i) CHECK_THAT(post(server.port(), "/echo"), Catch::StartsWith("HTTP/1.1 200"));
}
