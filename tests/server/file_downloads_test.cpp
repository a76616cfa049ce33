// Wheels larger than a socket's send buffer go out through sendfile(2) in several turns: they
// arrive whole over keep-alive, and a client that leaves or stops reading costs only its own
// connection.

#include <catch2/catch.hpp>

#include <array>
#include <cstdint>
#include <string>
#include <thread>

#include "test_server.hpp"

namespace wheelhouse::testing {
namespace {

namespace net = boost::asio;
namespace beast = boost::beast;
using tcp = net::ip::tcp;

constexpr std::string_view big_name = "big_kernels-1.0+cu130-cp312-cp312-linux_x86_64.whl";

// Incompressible bytes, so the wheel is as large on disk as its payload.
std::string noise(std::size_t size) {
    std::string bytes(size, '\0');
    std::uint64_t state = 0x9e3779b97f4a7c15ULL;
    for (auto& byte : bytes) {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        byte = static_cast<char>(state >> 56);
    }
    return bytes;
}

std::string big_wheel() {
    wheel_spec spec;
    spec.dist_info = "big_kernels-1.0+cu130.dist-info";
    spec.metadata = "Metadata-Version: 2.1\nName: big_kernels\nVersion: 1.0+cu130\n\n";
    spec.files = {{"big_kernels/_k.so", noise(24 * 1024 * 1024)}};
    return build_wheel(spec);
}

std::string request_for(std::string_view target, std::string_view extra = "") {
    return "GET " + std::string(target) + " HTTP/1.1\r\nHost: test\r\n" + std::string(extra) + "\r\n";
}

}  // namespace

TEST_CASE("server: a wheel larger than the socket buffer downloads whole, twice, over one connection",
          "[server][files]") {
    test_server server;
    const auto wheel = big_wheel();
    REQUIRE(wheel.size() > 24 * 1024 * 1024);
    const auto file = server.ingest(wheel, big_name);
    const std::string url = "/files/" + file.sha256 + "/" + std::string(big_name);

    net::io_context context;
    beast::tcp_stream stream(context);
    stream.connect(tcp::endpoint(net::ip::make_address("127.0.0.1"), server.port()));
    beast::flat_buffer buffer;
    for (int round = 0; round < 2; ++round) {
        http::request<http::empty_body> request{http::verb::get, url, 11};
        request.set(http::field::host, "test");
        http::write(stream, request);
        http::response_parser<http::string_body> parser;
        parser.body_limit(64 * 1024 * 1024);
        http::read(stream, buffer, parser);
        const auto& response = parser.get();
        CHECK(response.result_int() == 200);
        CHECK(response.keep_alive());
        CHECK(response.body().size() == wheel.size());
        CHECK(response.body() == wheel);
    }
    // A range deep inside the file, on the same connection.
    http::request<http::empty_body> ranged{http::verb::get, url, 11};
    ranged.set(http::field::host, "test");
    ranged.set(http::field::range, "bytes=20000000-20000099");
    http::write(stream, ranged);
    http::response<http::string_body> part;
    http::read(stream, buffer, part);
    CHECK(part.result_int() == 206);
    CHECK(part.body() == wheel.substr(20000000, 100));
}

TEST_CASE("server: a client that leaves in the middle of a download costs only its connection",
          "[server][files]") {
    test_server server;
    const auto wheel = big_wheel();
    const auto file = server.ingest(wheel, big_name);
    const std::string url = "/files/" + file.sha256 + "/" + std::string(big_name);

    for (int client = 0; client < 4; ++client) {
        net::io_context context;
        tcp::socket socket(context);
        socket.connect(tcp::endpoint(net::ip::make_address("127.0.0.1"), server.port()));
        const auto request = request_for(url);
        net::write(socket, net::buffer(request));
        std::array<char, 64 * 1024> chunk{};
        net::read(socket, net::buffer(chunk));  // the head and the first bytes, then away
        socket.set_option(net::socket_base::linger(true, 0));  // a reset, as a killed pip sends
        socket.close();
    }
    // The process took no SIGPIPE, and the next client gets every byte.
    const auto whole = server.get(url);
    CHECK(whole.result_int() == 200);
    CHECK(whole.body() == wheel);
}

TEST_CASE("server: a client that stops reading a download is cut off at the write deadline", "[server][files]") {
    server_settings settings;
    settings.limits.write_timeout = std::chrono::milliseconds(500);
    test_server server(settings);
    const auto wheel = big_wheel();
    const auto file = server.ingest(wheel, big_name);
    const std::string url = "/files/" + file.sha256 + "/" + std::string(big_name);

    net::io_context context;
    tcp::socket stalled(context);
    stalled.connect(tcp::endpoint(net::ip::make_address("127.0.0.1"), server.port()));
    const auto request = request_for(url);
    net::write(stalled, net::buffer(request));
    std::this_thread::sleep_for(std::chrono::milliseconds(1500));  // reads nothing past the deadline

    // Meanwhile others are served.
    CHECK(server.get("/healthz").result_int() == 200);

    // What was sent before the deadline is there to read, then the connection ends short.
    std::uint64_t received = 0;
    std::array<char, 256 * 1024> chunk{};
    boost::system::error_code ec;
    while (!ec) received += stalled.read_some(net::buffer(chunk), ec);
    CHECK((ec == net::error::eof || ec == net::error::connection_reset));
    CHECK(received > 0);
    CHECK(received < wheel.size());
}

}  // namespace wheelhouse::testing
