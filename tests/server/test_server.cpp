#include "test_server.hpp"

#include <catch2/catch.hpp>

#include <array>
#include <chrono>
#include <thread>

namespace wheelhouse::testing {

namespace net = boost::asio;
using tcp = net::ip::tcp;

test_server::test_server(server_settings settings) {
    auto store = storage::blob_store::open(data_.path());
    REQUIRE(store);
    blobs_ = std::make_unique<storage::blob_store>(std::move(store).value());
    auto opened = catalog::catalog::open(data_.path() / "catalog.db");
    REQUIRE(opened);
    catalog_ = std::move(opened).value();
    application_ = std::make_unique<app::application>(*catalog_, *blobs_, settings.app, settings.extra_routes);

    transport::server_options options;
    options.host = "127.0.0.1";
    options.port = 0;
    options.threads = settings.threads;
    options.limits = settings.limits;
    options.access_log = settings.access_log;
    options.metrics = &application_->metrics();
    server_ = std::make_unique<transport::server>(options, *application_);
    const auto opened_server = server_->open();
    REQUIRE(opened_server);
    port_ = server_->local_endpoint().port();
    server_->start();
}

test_server::~test_server() {
    server_->drain(std::chrono::milliseconds(2000));
    server_->wait();
    application_->finish_ingests();  // before the server's contexts go, as `wheelhouse serve` does
}

catalog::file_record test_server::ingest(std::string_view bytes, std::string_view filename) {
    auto spool = blobs_->create_spool();
    REQUIRE(spool);
    write_file(spool->path(), bytes);
    ingest::ingester ingester(*catalog_, *blobs_);
    ingest::ingest_options options;
    options.uploaded_by = "test";
    auto ingested = ingester.ingest_spool(std::move(spool).value(), filename, options);
    if (!ingested) FAIL(ingested.error().message);
    return ingested->file;
}

http_response test_server::request(http::verb method, std::string_view target, header_list headers,
                                   std::string body) {
    http::fields fields;
    for (const auto& [field, value] : headers) fields.set(field, value);
    return request(method, target, fields, std::move(body));
}

http_response test_server::request(http::verb method, std::string_view target, const http::fields& headers,
                                   std::string body) {
    net::io_context context;
    tcp::socket socket(context);
    socket.connect(tcp::endpoint(net::ip::make_address("127.0.0.1"), port_));
    http::request<http::string_body> request{method, target, 11};
    request.set(http::field::host, "127.0.0.1");
    for (const auto& field : headers) request.set(field.name_string(), field.value());
    request.body() = std::move(body);
    if (!request.body().empty() || method == http::verb::post || method == http::verb::put) request.prepare_payload();
    http::write(socket, request);
    boost::beast::flat_buffer buffer;
    http::response_parser<http::string_body> parser;
    parser.body_limit(1ull << 30);
    if (method == http::verb::head) parser.skip(true);
    http::read(socket, buffer, parser);
    return parser.release();
}

std::string test_server::raw(std::string_view bytes, std::chrono::milliseconds wait) {
    return raw_exchange(port_, bytes, wait);
}

std::string raw_exchange(unsigned short port, std::string_view bytes, std::chrono::milliseconds wait) {
    raw_client client(port);
    std::string received;
    // What does not fit the socket goes in pieces, reading between them, so a server that
    // answers early and stops reading does not leave its answer unread behind a full buffer.
    constexpr std::size_t piece = 64 * 1024;
    for (std::size_t at = 0; at < bytes.size() && !client.closed(); at += piece) {
        if (!client.send(bytes.substr(at, piece), wait)) break;
        received += client.received_now();
    }
    return received + client.receive(wait);
}

raw_client::raw_client(unsigned short port) : socket_(context_) {
    socket_.connect(tcp::endpoint(net::ip::make_address("127.0.0.1"), port));
    socket_.non_blocking(true);
}

raw_client::raw_client(unsigned short port, const net::ip::address& source) : socket_(context_) {
    socket_.open(tcp::v4());
    socket_.bind(tcp::endpoint(source, 0));
    socket_.connect(tcp::endpoint(net::ip::make_address("127.0.0.1"), port));
    socket_.non_blocking(true);
}

void raw_client::finish_sending() {
    boost::system::error_code ignored;
    socket_.shutdown(tcp::socket::shutdown_send, ignored);
}

bool raw_client::closed_by_server(std::chrono::milliseconds wait) {
    // The first byte after the close is answered with a reset; a later one then fails.
    const auto deadline = std::chrono::steady_clock::now() + wait;
    while (!send_failed_ && std::chrono::steady_clock::now() < deadline) {
        send("p", std::chrono::milliseconds(100));
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return send_failed_;
}

bool raw_client::send(std::string_view bytes, std::chrono::milliseconds wait) {
    const auto deadline = std::chrono::steady_clock::now() + wait;
    while (!bytes.empty() && !send_failed_) {
        boost::system::error_code ec;
        const auto n = socket_.write_some(net::buffer(bytes.data(), bytes.size()), ec);
        if (ec == net::error::would_block) {
            if (std::chrono::steady_clock::now() >= deadline) return false;
            std::this_thread::sleep_for(std::chrono::milliseconds(2));
            continue;
        }
        if (ec) send_failed_ = true;
        bytes.remove_prefix(n);
    }
    return !send_failed_;
}

std::string raw_client::received_now() {
    std::string received;
    std::array<char, 4096> chunk{};
    while (!closed_) {
        boost::system::error_code ec;
        const auto n = socket_.read_some(net::buffer(chunk), ec);
        if (ec == net::error::would_block) break;
        if (ec) closed_ = true;  // closed by the server
        received.append(chunk.data(), n);
    }
    return received;
}

std::string raw_client::receive(std::chrono::milliseconds wait) {
    std::string received;
    const auto deadline = std::chrono::steady_clock::now() + wait;
    while (!closed_ && std::chrono::steady_clock::now() < deadline) {
        received += received_now();
        if (!closed_) std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return received;
}

std::size_t count_responses(std::string_view bytes) {
    std::size_t count = 0;
    for (std::size_t at = 0; (at = bytes.find("HTTP/1.", at)) != std::string_view::npos; ++at) {
        if (at == 0 || bytes[at - 1] == '\n') ++count;
    }
    return count;
}

std::string make_wheel(std::string_view name, std::string_view version, std::string_view summary,
                       std::string_view requires_python) {
    wheel_spec spec;
    const std::string dist = std::string(name) + "-" + std::string(version);
    spec.dist_info = dist + ".dist-info";
    spec.metadata = "Metadata-Version: 2.1\nName: " + std::string(name) + "\nVersion: " + std::string(version) +
                    "\nSummary: " + std::string(summary) + "\n";
    if (!requires_python.empty()) spec.metadata += "Requires-Python: " + std::string(requires_python) + "\n";
    spec.metadata += "\nLong description.\n";
    spec.files = {{std::string(name) + "/__init__.py", "VERSION = '" + std::string(version) + "'\n"}};
    return build_wheel(spec);
}

std::uint64_t requests_counted(const test_server& server, metrics::route label) {
    std::uint64_t total = 0;
    for (unsigned status = 100; status < 600; ++status) total += server.metrics().requests(label, status);
    return total;
}

bool counted_once_more(const test_server& server, metrics::route label, std::uint64_t before) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (requests_counted(server, label) == before && std::chrono::steady_clock::now() < deadline)
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    return requests_counted(server, label) == before + 1;
}

}  // namespace wheelhouse::testing
