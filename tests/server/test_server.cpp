#include "test_server.hpp"

#include <catch2/catch.hpp>

#include <array>
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
    net::io_context context;
    tcp::socket socket(context);
    socket.connect(tcp::endpoint(net::ip::make_address("127.0.0.1"), port_));
    net::write(socket, net::buffer(bytes.data(), bytes.size()));
    std::string received;
    std::array<char, 4096> chunk{};
    socket.non_blocking(true);
    const auto deadline = std::chrono::steady_clock::now() + wait;
    while (std::chrono::steady_clock::now() < deadline) {
        boost::system::error_code ec;
        const auto n = socket.read_some(net::buffer(chunk), ec);
        if (ec == net::error::would_block) {
            std::this_thread::sleep_for(std::chrono::milliseconds(5));
            continue;
        }
        if (ec) break;  // closed by the server
        received.append(chunk.data(), n);
    }
    return received;
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

}  // namespace wheelhouse::testing
