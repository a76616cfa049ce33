// Limits on what a client controls: trailers, chunk extensions, the body's pace, open connections.
// Each is answered with a precise 4xx (or 503) and Connection: close, and everyone else is still served.

#include <catch2/catch.hpp>

#include <thread>
#include <vector>

#include <sys/resource.h>

#include "echo_server.hpp"
#include "test_server.hpp"

using namespace wheelhouse;
using namespace wheelhouse::testing;
using namespace std::chrono_literals;

namespace {

const std::string chunked_get = "GET /healthz HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n";

bool answered_with(const std::string& answer, const char* status_line, const char* phrase) {
    return answer.starts_with(status_line) && answer.find(phrase) != std::string::npos &&
           answer.find("Connection: close") != std::string::npos;
}

}  // namespace

TEST_CASE("server: a trailer field of 64 KiB ends its own connection, not the server", "[server][transport][limits]") {
    test_server server;
    // The reproducer of issue 14: Beast threw std::length_error out of io_context::run.
    const auto answer = server.raw(chunked_get + "0\r\nX: " + std::string(65534, 'a') + "\r\n\r\n");
    CHECK(answered_with(answer, "HTTP/1.1 431", "trailer fields"));
    CHECK(server.get("/healthz").result_int() == 200);
    const auto name = server.raw(chunked_get + "0\r\n" + std::string(70000, 'n') + ": v\r\n\r\n");
    CHECK(answered_with(name, "HTTP/1.1 431", "trailer fields"));
    CHECK(server.get("/healthz").result_int() == 200);
}

TEST_CASE("server: trailers count with the header block", "[server][transport][limits]") {
    test_server server;
    // Many small fields, none near Beast's own limits, trickled in: refused at the header limit.
    raw_client client(server.port());
    client.send(chunked_get + "0\r\n");
    std::string answer;
    for (int i = 0; i < 2000 && !client.closed(); ++i) {
        if (!client.send("X-Trailer-" + std::to_string(i) + ": 0123456789abcdef\r\n")) break;
        answer += client.received_now();
    }
    answer += client.receive(2s);
    CHECK(answered_with(answer, "HTTP/1.1 431", "headers and trailers together pass 16384 bytes"));

    // in one piece too
    std::string fields;
    for (int i = 0; i < 800; ++i) fields += "X-Trailer-" + std::to_string(i) + ": 0123456789abcdef\r\n";
    CHECK(answered_with(server.raw(chunked_get + "0\r\n" + fields + "\r\n"), "HTTP/1.1 431", "trailers"));

    // a few are read and ignored
    CHECK_THAT(server.raw(chunked_get + "0\r\nX-Checksum: abc\r\n\r\n", 500ms), Catch::StartsWith("HTTP/1.1 200"));
}

TEST_CASE("server: trailer fields do not reach the handler as headers", "[server][transport][limits]") {
    echo_server server;
    // RFC 9110 §6.5.1: a trailer must not add to the header section (an Authorization, say).
    const auto answer = raw_exchange(server.port(),
                                     "POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n"
                                     "Connection: close\r\n\r\n5\r\nhello\r\n0\r\nAuthorization: Bearer x\r\n"
                                     "X-Trailer: 1\r\n\r\n");
    CHECK_THAT(answer, Catch::StartsWith("HTTP/1.1 200"));
    CHECK_THAT(answer, Catch::Contains("fields: Host,Transfer-Encoding,Connection\nbody: 5"));
}

TEST_CASE("server: chunk extensions are limited", "[server][transport][limits]") {
    test_server server;
    SECTION("one endless extension, trickled in, is refused long before it ends") {
        raw_client client(server.port());
        client.send(chunked_get + "5;x=");
        std::string answer;
        std::size_t sent = 0;
        while (sent < 64 * 1024 * 1024 && client.send(std::string(16 * 1024, 'a'), 2000ms) && !client.closed()) {
            sent += 16 * 1024;
            answer += client.received_now();
            // Paced until the answer comes, so what is measured is where the server refused, not
            // how far loopback's buffers let the client run ahead while the server waited for a core.
            if (answer.empty()) std::this_thread::sleep_for(1ms);
        }
        answer += client.receive(2s);
        CHECK(answered_with(answer, "HTTP/1.1 400", "without chunk extensions"));
        CHECK(sent < 8 * 1024 * 1024);  // refused within the first few reads, long before 64 MiB
    }
    SECTION("small extensions on many chunks add up") {
        std::string body;
        for (int i = 0; i < 600; ++i) body += "1;name=value\r\na\r\n";
        const auto answer = server.raw(chunked_get + body + "0\r\n\r\n");
        CHECK(answered_with(answer, "HTTP/1.1 400", "pass 4096 bytes"));
    }
    SECTION("an extension on the last chunk counts too") {
        const auto answer = server.raw(chunked_get + "0;" + std::string(5000, 'e') + "\r\n\r\n");
        CHECK(answered_with(answer, "HTTP/1.1 400", "without chunk extensions"));
    }
    CHECK(server.get("/healthz").result_int() == 200);
}

TEST_CASE("server: a body trickled in ends at the rate deadline with 408", "[server][transport][limits]") {
    transport::session_limits limits;
    limits.read_timeout = 400ms;
    limits.min_body_rate = 1000;
    echo_server server(limits);
    raw_client client(server.port());
    client.send("POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\n");
    const auto started = std::chrono::steady_clock::now();
    std::string answer;
    // One byte every 50 ms: each comes well inside the read timeout, so only the rate can end it.
    while (!client.closed() && std::chrono::steady_clock::now() - started < 5s) {
        if (!client.send("a")) break;
        answer += client.received_now();
        if (!answer.empty()) break;
        std::this_thread::sleep_for(50ms);
    }
    answer += client.receive(1s);
    const auto elapsed = std::chrono::steady_clock::now() - started;
    CHECK(answered_with(answer, "HTTP/1.1 408", "below this server's minimum of 1000"));
    CHECK(elapsed < 3s);
    CHECK(raw_exchange(server.port(), "GET /ok HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
              .starts_with("HTTP/1.1 200"));
}

TEST_CASE("server: a body that stops is answered 408 while the socket can still take it",
          "[server][transport][limits]") {
    transport::session_limits limits;
    limits.read_timeout = 300ms;
    echo_server server(limits);
    const std::string body_starts[] = {"Content-Length: 10\r\n\r\nhello", "Transfer-Encoding: chunked\r\n\r\n5\r\nhel"};
    for (const auto& body_start : body_starts) {
        CAPTURE(body_start);
        raw_client client(server.port());
        client.send("POST /echo HTTP/1.1\r\nHost: x\r\n" + body_start);
        const auto started = std::chrono::steady_clock::now();
        const auto answer = client.receive(3s);
        CHECK(answered_with(answer, "HTTP/1.1 408", "without pausing: nothing of its body arrived for 300 ms"));
        CHECK(std::chrono::steady_clock::now() - started < 3s);
    }
}

TEST_CASE("server: a steady body may take longer than the read timeout", "[server][transport][limits]") {
    transport::session_limits limits;
    limits.read_timeout = 300ms;
    limits.min_body_rate = 1000;
    echo_server server(limits);
    raw_client client(server.port());
    const std::size_t total = 20 * 2000;
    client.send("POST /echo HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Length: " + std::to_string(total) +
                "\r\n\r\n");
    // 2,000 bytes every 50 ms (40,000 a second) for a second: past the read timeout, above the rate.
    for (int i = 0; i < 20; ++i) {
        CHECK(client.send(std::string(2000, 'b')));
        std::this_thread::sleep_for(50ms);
    }
    const auto answer = client.receive(2s);
    CHECK_THAT(answer, Catch::StartsWith("HTTP/1.1 200"));
    CHECK_THAT(answer, Catch::Contains("body: 40000"));
}

TEST_CASE("server: a refused body still coming is read and dropped, so the client reads the refusal",
          "[server][transport][limits]") {
    transport::session_limits limits;
    limits.linger_timeout = 800ms;  // long enough that a loaded machine's pauses do not end it
    limits.linger_time = 4s;
    echo_server server(limits);
    const std::string oversized = "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 100000000\r\n\r\n";
    const std::string piece(64 * 1024, 'w');
    // 413 at the headers; the client, like twine, sends its body before it reads the answer.
    SECTION("while the body keeps coming, past the linger's timeout") {
        raw_client client(server.port());
        client.send(oversized);
        bool all_taken = true;
        for (int i = 0; i < 40 && all_taken; ++i) {  // 1.3 MB a second for 2 s
            all_taken = client.send(piece, 1s);
            std::this_thread::sleep_for(50ms);
        }
        CHECK(all_taken);
        CHECK(answered_with(client.receive(2s), "HTTP/1.1 413", "larger than this server's limit"));
    }
    SECTION("for linger_time at most") {
        raw_client client(server.port());
        client.send(oversized);
        const auto started = std::chrono::steady_clock::now();
        while (client.send(piece, 1s) && std::chrono::steady_clock::now() - started < 10s)
            std::this_thread::sleep_for(20ms);
        const auto cut_after = std::chrono::steady_clock::now() - started;
        CHECK(cut_after >= 3s);
        CHECK(cut_after < 6s);
    }
    SECTION("and a trickle after the refusal ends at the linger's timeout") {
        raw_client client(server.port());
        client.send(oversized);
        const auto started = std::chrono::steady_clock::now();
        while (client.send("t", 1s) && std::chrono::steady_clock::now() - started < 10s)
            std::this_thread::sleep_for(50ms);
        CHECK(std::chrono::steady_clock::now() - started < 3s);
    }
}

TEST_CASE("server: past the connection cap a client gets 503 at once, and those connected are still served",
          "[server][transport][limits]") {
    transport::session_limits limits;
    limits.max_connections = 3;
    limits.read_timeout = 5s;
    echo_server server(limits);
    // Three clients trickle their requests in, holding every connection the server allows.
    std::vector<std::unique_ptr<raw_client>> trickling;
    for (int i = 0; i < 3; ++i) {
        trickling.push_back(std::make_unique<raw_client>(server.port()));
        trickling.back()->send("POST /echo HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Length: 4\r\n\r\na");
    }
    std::this_thread::sleep_for(100ms);  // accepted, each by its session
    for (int i = 0; i < 5; ++i) {
        const auto started = std::chrono::steady_clock::now();
        const auto answer = raw_exchange(server.port(), "GET /ok HTTP/1.1\r\nHost: x\r\n\r\n");
        CHECK(answered_with(answer, "HTTP/1.1 503", "limit of 3 connections open (--max-connections)"));
        CHECK_THAT(answer, Catch::Contains("Retry-After: 1"));
        CHECK(std::chrono::steady_clock::now() - started < 1s);
    }
    for (auto& client : trickling) {
        client->send("bcd");
        CHECK_THAT(client->receive(2s), Catch::StartsWith("HTTP/1.1 200"));
    }
    trickling.clear();
    // Their connections closed: a new client is served again.
    std::string answer;
    for (int attempt = 0; attempt < 50 && !answer.starts_with("HTTP/1.1 200"); ++attempt) {
        std::this_thread::sleep_for(20ms);
        answer = raw_exchange(server.port(), "GET /ok HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    }
    CHECK_THAT(answer, Catch::StartsWith("HTTP/1.1 200"));
}

TEST_CASE("server: the connection cap defaults to what the descriptor limit leaves room for",
          "[server][transport][limits]") {
    rlimit limit{};
    REQUIRE(::getrlimit(RLIMIT_NOFILE, &limit) == 0);
    const auto cap = transport::default_max_connections(2);
    CHECK(cap >= 1);
    CHECK(cap * 2 < limit.rlim_cur);  // a socket and one more descriptor each, and room to spare
    echo_server server;
    CHECK(server.server().limits().max_connections == cap);
}
