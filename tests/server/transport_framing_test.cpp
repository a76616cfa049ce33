// RFC 9112 §6 and §7: a body whose end the server cannot know for sure is refused, and the
// connection closed, before anything after it can be taken for the next request.

#include <catch2/catch.hpp>

#include "test_server.hpp"

using namespace wheelhouse;
using namespace wheelhouse::testing;

namespace {

// A second request hidden where the body would be: a server that misreads the framing answers it.
const std::string smuggled = "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n";

std::string chunk_of(std::string_view data) {
    char size[20];
    std::snprintf(size, sizeof size, "%zx", data.size());
    return std::string(size) + "\r\n" + std::string(data) + "\r\n";
}

}  // namespace

TEST_CASE("server: Transfer-Encoding other than a final chunked is refused and the connection closed",
          "[server][transport][framing]") {
    test_server server;
    const std::string chunked_body = chunk_of(smuggled) + "0\r\n\r\n";
    struct row {
        std::string fields;
        std::string body;
        const char* status_line;
        const char* phrase;
    };
    const row table[] = {
        {"Transfer-Encoding: chunked, identity\r\n", chunked_body, "HTTP/1.1 400",
         "end Transfer-Encoding with chunked"},
        {"Transfer-Encoding: xchunked\r\n", smuggled, "HTTP/1.1 400", "end Transfer-Encoding with chunked"},
        {"Transfer-Encoding: chunked, gzip\r\n", chunked_body, "HTTP/1.1 400", "end Transfer-Encoding with chunked"},
        {"Transfer-Encoding: \r\n", smuggled, "HTTP/1.1 400", "end Transfer-Encoding with chunked"},
        {"Transfer-Encoding: gzip\r\nContent-Length: 5\r\n", "hello" + smuggled, "HTTP/1.1 400",
         "end Transfer-Encoding with chunked"},
        {"Transfer-Encoding: chunked, chunked\r\n", chunked_body, "HTTP/1.1 400", "apply chunked once"},
        {"Transfer-Encoding: gzip, chunked\r\n", chunked_body, "HTTP/1.1 501", "'gzip' transfer coding"},
        {"Transfer-Encoding: chunked\r\nContent-Length: 5\r\n", chunked_body, "HTTP/1.1 400",
         "no Transfer-Encoding beside"},
        {"Content-Length: 5\r\nTransfer-Encoding: chunked\r\n", chunked_body, "HTTP/1.1 400",
         "no Content-Length beside"},
        {"Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n", chunked_body, "HTTP/1.1 400",
         "one Transfer-Encoding"},
    };
    for (const auto& [fields, body, status_line, phrase] : table) {
        CAPTURE(fields);
        const auto answer = server.raw("GET /healthz HTTP/1.1\r\nHost: x\r\n" + fields + "\r\n" + body);
        CHECK_THAT(answer, Catch::StartsWith(status_line));
        CHECK_THAT(answer, Catch::Contains(phrase));
        CHECK_THAT(answer, Catch::Contains("Connection: close"));
        CHECK(count_responses(answer) == 1);
    }
    CHECK(server.get("/healthz").result_int() == 200);
}

TEST_CASE("server: Transfer-Encoding in HTTP/1.0 is refused", "[server][transport][framing]") {
    test_server server;
    const auto answer =
        server.raw("GET /healthz HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n" + chunk_of(smuggled) + "0\r\n\r\n");
    CHECK_THAT(answer, Catch::StartsWith("HTTP/1.1 400"));
    CHECK_THAT(answer, Catch::Contains("HTTP/1.0 has no Transfer-Encoding"));
    CHECK(count_responses(answer) == 1);
}

TEST_CASE("server: a malformed chunk size is answered 400, not a silent close", "[server][transport][framing]") {
    test_server server;
    const char* sizes[] = {"zz", "-1", "1000000000000000000" /* 2^72 */, "", " 5", "5;=", "5;a=\"b", "0;a=\"b"};
    for (const auto* size : sizes) {
        CAPTURE(size);
        const auto answer = server.raw("GET /healthz HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n" +
                                       std::string(size) + "\r\nhello\r\n0\r\n\r\n" + smuggled);
        CHECK_THAT(answer, Catch::StartsWith("HTTP/1.1 400"));
        CHECK_THAT(answer, Catch::Contains("chunked body is malformed"));
        CHECK_THAT(answer, Catch::Contains("Connection: close"));
        CHECK(count_responses(answer) == 1);
    }
    // a chunk's data longer than its size says
    const auto answer = server.raw(
        "GET /healthz HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nhello\r\n0\r\n\r\n");
    CHECK_THAT(answer, Catch::StartsWith("HTTP/1.1 400"));
    CHECK(server.get("/healthz").result_int() == 200);
}

TEST_CASE("server: a well-framed chunked body with extensions and a trailer is read whole",
          "[server][transport][framing]") {
    test_server server;
    const auto answer = server.raw("GET /healthz HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip , CHUNKED\r\n\r\n",
                                   std::chrono::milliseconds(500));
    CHECK_THAT(answer, Catch::StartsWith("HTTP/1.1 501"));  // chunked matched without regard to case
    const auto pipelined = server.raw(
        "GET /healthz HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: Chunked\r\n\r\n"
        "5;name=value;flag\r\nhello\r\n0\r\nX-Checksum: abc\r\n\r\n" + smuggled +
        "GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    CHECK(count_responses(pipelined) == 3);  // the body's end is known: the next two are requests
    CHECK_THAT(pipelined, Catch::StartsWith("HTTP/1.1 200"));
}
