#include <catch2/catch.hpp>

#include <thread>

#include "test_server.hpp"

using namespace wheelhouse;
using namespace wheelhouse::testing;

TEST_CASE("server: malformed and absurd requests get a precise 4xx", "[server][transport]") {
    test_server server;
    struct row {
        std::string request;
        const char* status_line;
        const char* phrase;
    };
    const row table[] = {
        {"GET /simple/../ HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", "HTTP/1.1 400", "'..' segment"},
        {"GET /simple/a%00b/ HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", "HTTP/1.1 400", "control character"},
        {"GET /files/a%2Fb/c HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", "HTTP/1.1 400", "encoded '/'"},
        {"BREW /simple/ HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", "HTTP/1.1 501", "BREW is not supported"},
        {"GET /simple/ HTTP/1.1\r\nHost: x\r\nX-Big: " + std::string(20000, 'a') + "\r\n\r\n", "HTTP/1.1 431",
         "headers are larger"},
        {"this is not http\r\n\r\n", "HTTP/1.1 400", "malformed HTTP request"},
        {"GET /simple/ HTTP/1.1\r\nHost: x\r\nContent-Length: nope\r\n\r\n", "HTTP/1.1 400",
         "one Content-Length of decimal digits"},
    };
    for (const auto& [request, status_line, phrase] : table) {
        CAPTURE(request.substr(0, 60));
        const auto answer = server.raw(request, std::chrono::milliseconds(2000));
        CHECK_THAT(answer, Catch::StartsWith(status_line));
        CHECK_THAT(answer, Catch::Contains(phrase));
    }
    // and it still serves everyone else
    CHECK(server.get("/healthz").result_int() == 200);
}

TEST_CASE("server: keep-alive serves pipelined requests in order", "[server][transport]") {
    test_server server;
    const auto answer = server.raw(
        "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"
        "HEAD /simple/ HTTP/1.1\r\nHost: x\r\n\r\n"
        "GET /nothing HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
        std::chrono::milliseconds(2000));
    const auto first = answer.find("HTTP/1.1 200");
    const auto second = answer.find("HTTP/1.1 200", first + 1);
    const auto third = answer.find("HTTP/1.1 404");
    CHECK(first == 0);
    CHECK(second != std::string::npos);
    CHECK(third != std::string::npos);
    CHECK(second < third);
}

TEST_CASE("server: a silent client is disconnected at its deadline while others are served", "[server][transport]") {
    server_settings settings;
    settings.limits.idle_timeout = std::chrono::milliseconds(300);
    settings.limits.read_timeout = std::chrono::milliseconds(300);
    test_server server(settings);

    std::string slow_answer;
    std::thread slow([&] { slow_answer = server.raw("GET /simple/ HTTP/1.1\r\nHost: x\r\n", std::chrono::milliseconds(3000)); });
    for (int i = 0; i < 20; ++i) CHECK(server.get("/healthz").result_int() == 200);
    const auto started = std::chrono::steady_clock::now();
    slow.join();
    // closed by the server's deadline, long before the client's own 3 s wait ran out
    CHECK(std::chrono::steady_clock::now() - started < std::chrono::milliseconds(2500));
    CHECK(slow_answer.empty());
}

TEST_CASE("server: drain closes idle connections and finishes", "[server][transport]") {
    auto server = std::make_unique<test_server>();
    namespace net = boost::asio;
    net::io_context context;
    net::ip::tcp::socket idle(context);
    idle.connect({net::ip::make_address("127.0.0.1"), server->port()});
    const auto started = std::chrono::steady_clock::now();
    server->drain(std::chrono::milliseconds(5000));
    server->wait();
    CHECK(std::chrono::steady_clock::now() - started < std::chrono::milliseconds(2000));
    server.reset();  // as the process would exit: nothing of the server may keep the connection
    std::array<char, 16> buffer{};
    boost::system::error_code ec;
    idle.read_some(net::buffer(buffer), ec);
    CHECK(ec);  // the server closed it
}
