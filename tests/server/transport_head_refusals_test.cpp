// Every refusal the transport writes itself, to a HEAD: the head a GET would get (with its
// Content-Length) and not a byte after it (RFC 9110 §9.3.2; issue 24 item 6).

#include <catch2/catch.hpp>

#include <thread>

#include "echo_server.hpp"
#include "test_server.hpp"

using namespace wheelhouse;
using namespace wheelhouse::testing;
using namespace std::chrono_literals;

namespace {

// A whole head, a Content-Length for the text a GET would carry, and nothing after the head.
void check_head_only(const std::string& answer, const char* status_line) {
    CAPTURE(answer);
    CHECK_THAT(answer, Catch::StartsWith(status_line));
    CHECK_THAT(answer, Catch::Contains("Connection: close"));
    CHECK_THAT(answer, Catch::Contains("Content-Length: "));
    CHECK_THAT(answer, !Catch::Contains("Content-Length: 0\r\n"));
    const auto head_end = answer.find("\r\n\r\n");
    REQUIRE(head_end != std::string::npos);
    CHECK(answer.size() == head_end + 4);
}

const std::string chunked_head = "HEAD /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n";

}  // namespace

TEST_CASE("server: a refusal to a HEAD has no body", "[server][transport][head]") {
    echo_server server;
    const std::string long_field = "X-Padding: " + std::string(20 * 1024, 'a') + "\r\n";
    struct refused_request {
        const char* what;
        std::string bytes;
        const char* status_line;
    };
    const refused_request cases[] = {
        // The request line alone passes the header limit: refused before it is parsed.
        {"431, request line", "HEAD /" + std::string(20 * 1024, 'a') + " HTTP/1.1\r\nHost: x\r\n\r\n",
         "HTTP/1.1 431"},
        {"431, fields", "HEAD /echo HTTP/1.1\r\nHost: x\r\n" + long_field + "\r\n", "HTTP/1.1 431"},
        {"400, malformed field", "HEAD /echo HTTP/1.1\r\nHost x\r\n\r\n", "HTTP/1.1 400"},
        {"400, Transfer-Encoding in HTTP/1.0", "HEAD /echo HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n",
         "HTTP/1.1 400"},
        {"501, gzip", "HEAD /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n",
         "HTTP/1.1 501"},
        {"413, declared length", "HEAD /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 100000000\r\n\r\n",
         "HTTP/1.1 413"},
        {"413, chunked body", chunked_head + "200000\r\n" + std::string(0x200000, 'b') + "\r\n0\r\n\r\n",
         "HTTP/1.1 413"},
        {"400, malformed chunk", chunked_head + "zz\r\nhello\r\n0\r\n\r\n", "HTTP/1.1 400"},
        {"400, chunk extensions", chunked_head + "5;x=" + std::string(8 * 1024, 'e') + "\r\nhello\r\n0\r\n\r\n",
         "HTTP/1.1 400"},
        {"431, trailer", chunked_head + "0\r\n" + long_field + "\r\n", "HTTP/1.1 431"},
        {"500, the handler threw", "HEAD /throw/handle HTTP/1.1\r\nHost: x\r\n\r\n", "HTTP/1.1 500"},
        {"500, plan_body threw", "HEAD /throw/plan HTTP/1.1\r\nHost: x\r\n\r\n", "HTTP/1.1 500"},
    };
    SECTION("each refusal") {
        for (const auto& refused : cases) {
            CAPTURE(refused.what);
            check_head_only(raw_exchange(server.port(), refused.bytes), refused.status_line);
        }
    }
    SECTION("400, the connection ended inside the header block") {
        raw_client client(server.port());
        client.send("HEAD /echo HTTP/1.1\r\nHost: x\r\n");
        client.finish_sending();
        check_head_only(client.receive(2s), "HTTP/1.1 400");
    }
    SECTION("while a GET's refusal keeps its text") {
        const auto answer = raw_exchange(server.port(), "GET /echo HTTP/1.1\r\nHost: x\r\n" + long_field + "\r\n");
        CHECK_THAT(answer, Catch::StartsWith("HTTP/1.1 431"));
        CHECK_THAT(answer, Catch::EndsWith("larger than 16384 bytes\n"));
    }
}

TEST_CASE("server: a HEAD whose body stalls or trickles gets a 408 without a body", "[server][transport][head]") {
    transport::session_limits limits;
    limits.read_timeout = 300ms;
    echo_server server(limits);
    raw_client client(server.port());
    client.send("HEAD /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\nab");
    check_head_only(client.receive(3s), "HTTP/1.1 408");
}

TEST_CASE("server: the 503 past the connection cap, to a HEAD that has arrived, has no body",
          "[server][transport][head][connection-cap]") {
    transport::session_limits limits;
    limits.max_connections = 2;
    limits.read_timeout = 10s;
    echo_server server(limits, 1);  // one I/O thread, which also accepts
    raw_client uploading(server.port());
    uploading.send("POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\n\r\na");
    std::this_thread::sleep_for(100ms);
    // plan_body holds the only I/O thread for 500 ms; then this connection is busy reading a body.
    raw_client blocking(server.port());
    blocking.send("POST /block HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\n\r\n");
    std::this_thread::sleep_for(100ms);
    // So this HEAD is in the socket before the listener accepts it, at the cap, all busy.
    raw_client head(server.port());
    head.send("HEAD /echo HTTP/1.1\r\nHost: x\r\n\r\n");
    const auto answer = head.receive(3s);
    check_head_only(answer, "HTTP/1.1 503");
    CHECK_THAT(answer, Catch::Contains("Retry-After: 1"));
    uploading.send("bcd");
    blocking.send("abcd");
    for (auto* client : {&uploading, &blocking}) CHECK_THAT(client->receive(2s), Catch::StartsWith("HTTP/1.1 200"));
}
