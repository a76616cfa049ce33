// Streamed response bodies (transport::body_source): a producer thread feeds a relay_body while
// the session writes it; a failure after the head ends the connection short of Content-Length;
// a client that goes away stops the producer. The real transport on port 0, a tiny handler.

#include <catch2/catch.hpp>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include "wheelhouse/transport/relay_body.hpp"
#include "wheelhouse/transport/server.hpp"

namespace {

using namespace wheelhouse;
namespace net = boost::asio;
namespace http = boost::beast::http;
using tcp = net::ip::tcp;

constexpr std::size_t piece_bytes = 100 * 1000;
constexpr std::size_t pieces = 40;  // 4 MB: more than the relay's capacity below
constexpr std::size_t total_bytes = piece_bytes * pieces;

char byte_at(std::size_t position) { return static_cast<char>('a' + position % 26); }

// GET /whole sends total_bytes; GET /fail stops after half and fails; GET /big sends 50 times more; every producer counts
// the pieces it could not push (the client had gone).
class streaming_handler final : public transport::request_handler {
public:
    transport::body_plan plan_body(const http::request_header<>&) override { return {}; }

    void handle(transport::incoming_request request, transport::responder respond) override {
        const bool fail_midway = request.header.target() == "/fail";
        // /big: far more than the socket buffers and the relay hold, so the producer must wait.
        const std::size_t count = request.header.target() == "/big" ? 50 * pieces : pieces;
        auto body = std::make_shared<transport::relay_body>(1u << 20);
        const std::uint64_t length = count * piece_bytes;
        transport::prepared_head head{"HTTP/1.1 200 OK\r\nContent-Length: " + std::to_string(length) + "\r\n\r\n"};
        respond({transport::streamed_response{std::move(head), body}, 200, length});
        if (request.header.target() == "/silent") return go_silent(body);
        producers_.emplace_back([this, body, fail_midway, count] {
            for (std::size_t index = 0; index < count; ++index) {
                if (fail_midway && index == pieces / 2) return body->fail();
                std::string piece(piece_bytes, '\0');
                for (std::size_t i = 0; i < piece_bytes; ++i) piece[i] = byte_at(index * piece_bytes + i);
                if (!body->push(std::move(piece))) {
                    refused_.fetch_add(1);
                    return;
                }
            }
            body->finish();
        });
    }

    ~streaming_handler() override {
        for (auto& producer : producers_) producer.join();
    }

    std::atomic<int> refused_{0};
    std::atomic<bool> stopped_{false};  // /silent's on_cancel ran

    // /silent: one piece, then nothing more, as a remote host that went quiet; the producer
    // waits until the body is cancelled.
    void go_silent(const std::shared_ptr<transport::relay_body>& body) {
        body->on_cancel([this] { stopped_ = true; });
        producers_.emplace_back([body] {
            body->push(std::string(piece_bytes, 'a'));
            const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
            while (!body->cancelled() && std::chrono::steady_clock::now() < deadline)
                std::this_thread::sleep_for(std::chrono::milliseconds(10));
        });
    }

private:
    std::vector<std::thread> producers_;  // handle() runs on the one I/O thread
};

struct running_server {
    streaming_handler handler;
    std::unique_ptr<transport::server> server;
    unsigned short port = 0;

    running_server() {
        transport::server_options options;
        options.host = "127.0.0.1";
        options.port = 0;
        options.threads = 1;
        options.access_log = "off";
        server = std::make_unique<transport::server>(options, handler);
        REQUIRE(server->open());
        port = server->local_endpoint().port();
        server->start();
    }
    ~running_server() {
        server->drain(std::chrono::milliseconds(2000));
        server->wait();
    }
};

}  // namespace

TEST_CASE("transport: a streamed body arrives whole and the connection stays open", "[server][transport]") {
    running_server running;
    net::io_context context;
    tcp::socket socket(context);
    socket.connect(tcp::endpoint(net::ip::make_address("127.0.0.1"), running.port));
    boost::beast::flat_buffer buffer;
    for (int round = 0; round < 2; ++round) {  // keep-alive: the second request reuses the connection
        http::request<http::empty_body> request{http::verb::get, "/whole", 11};
        http::write(socket, request);
        http::response_parser<http::string_body> parser;
        parser.body_limit(total_bytes + 1);
        http::read(socket, buffer, parser);
        const auto& body = parser.get().body();
        REQUIRE(body.size() == total_bytes);
        bool same = true;
        for (std::size_t i = 0; i < body.size() && same; ++i) same = body[i] == byte_at(i);
        CHECK(same);
    }
}

TEST_CASE("transport: a body that fails after its head ends the connection short", "[server][transport]") {
    running_server running;
    net::io_context context;
    tcp::socket socket(context);
    socket.connect(tcp::endpoint(net::ip::make_address("127.0.0.1"), running.port));
    http::request<http::empty_body> request{http::verb::get, "/fail", 11};
    http::write(socket, request);
    boost::beast::flat_buffer buffer;
    http::response_parser<http::string_body> parser;
    parser.body_limit(total_bytes + 1);
    boost::system::error_code ec;
    http::read(socket, buffer, parser, ec);
    CHECK(ec == http::error::partial_message);  // closed before Content-Length was reached
    CHECK(parser.get().body().size() < total_bytes);
}

TEST_CASE("transport: a client that goes away stops the producer", "[server][transport]") {
    running_server running;
    {
        net::io_context context;
        tcp::socket socket(context);
        socket.open(tcp::v4());
        socket.set_option(net::socket_base::receive_buffer_size(16 * 1024));
        socket.connect(tcp::endpoint(net::ip::make_address("127.0.0.1"), running.port));
        http::request<http::empty_body> request{http::verb::get, "/big", 11};
        http::write(socket, request);
        std::array<char, 1024> some{};
        socket.read_some(net::buffer(some));  // the head has come; then we stop reading and leave
        std::this_thread::sleep_for(std::chrono::milliseconds(300));
    }
    // The producer, blocked on the full relay, learns at once that nobody will read the rest.
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (running.handler.refused_.load() == 0 && std::chrono::steady_clock::now() < deadline)
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    CHECK(running.handler.refused_.load() == 1);
}

TEST_CASE("transport: a client that hangs up while the producer is silent cancels it at once", "[server][transport]") {
    running_server running;  // the write deadline is a minute: only the hang-up can end this soon
    for (const bool reset : {false, true}) {
        running.handler.stopped_ = false;
        {
            net::io_context context;
            tcp::socket socket(context);
            socket.connect(tcp::endpoint(net::ip::make_address("127.0.0.1"), running.port));
            http::request<http::empty_body> request{http::verb::get, "/silent", 11};
            http::write(socket, request);
            std::string received;
            std::array<char, 64 * 1024> some{};
            while (received.size() < piece_bytes)  // the head and the one piece
                received.append(some.data(), socket.read_some(net::buffer(some)));
            std::this_thread::sleep_for(std::chrono::milliseconds(200));  // the session waits on the body
            if (reset) socket.set_option(net::socket_base::linger(true, 0));
        }  // closed: a FIN, or a reset
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(3);
        while (!running.handler.stopped_ && std::chrono::steady_clock::now() < deadline)
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
        CHECK(running.handler.stopped_);
    }
}
