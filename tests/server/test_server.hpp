#pragma once
// The real server, in process, on 127.0.0.1 port 0, over a fresh data folder; and a small
// blocking HTTP client that can also send bytes no well-behaved client would.

#include <chrono>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include "test_support.hpp"
#include "wheelhouse/app/application.hpp"
#include "wheelhouse/catalog/catalog.hpp"
#include "wheelhouse/ingest/ingester.hpp"
#include "wheelhouse/storage/blob_store.hpp"
#include "wheelhouse/transport/server.hpp"
#include "zip_builder.hpp"

namespace wheelhouse::testing {

namespace http = boost::beast::http;
using http_response = http::response<http::string_body>;
using header_list = std::initializer_list<std::pair<http::field, std::string_view>>;

struct server_settings {
    transport::session_limits limits;
    app::app_settings app;
    unsigned threads = 2;
    std::string access_log = "off";
    std::vector<app::route> extra_routes;  // test-only routes, answered after the route table's
};

class test_server {
public:
    explicit test_server(server_settings settings = {});
    ~test_server();

    unsigned short port() const { return port_; }
    catalog::catalog& catalog() { return *catalog_; }
    const storage::blob_store& blobs() const { return *blobs_; }
    const std::filesystem::path& data() const { return data_.path(); }
    app::page_cache& pages() { return application_->pages(); }
    const auth::token_store& tokens() const { return application_->tokens(); }
    const metrics::server_metrics& metrics() const { return application_->metrics(); }

    // Puts a wheel into the catalog the way uploads and `wheelhouse ingest` do.
    catalog::file_record ingest(std::string_view bytes, std::string_view filename);

    // One request on a fresh connection.
    http_response request(http::verb method, std::string_view target, header_list headers = {}, std::string body = {});
    // The same with headers built at run time.
    http_response request(http::verb method, std::string_view target, const http::fields& headers, std::string body);
    http_response get(std::string_view target, header_list headers = {}) {
        return request(http::verb::get, target, headers);
    }
    // Raw bytes in, whatever comes back (until the server closes or `wait` passes).
    std::string raw(std::string_view bytes, std::chrono::milliseconds wait = std::chrono::milliseconds(3000));

    void drain(std::chrono::milliseconds deadline) { server_->drain(deadline); }
    void wait() { server_->wait(); }

private:
    temp_dir data_;
    std::unique_ptr<catalog::catalog> catalog_;
    std::unique_ptr<storage::blob_store> blobs_;
    std::unique_ptr<app::application> application_;
    std::unique_ptr<transport::server> server_;
    unsigned short port_ = 0;
};

// Every request /metrics counted under `label`, whatever its status.
std::uint64_t requests_counted(const test_server& server, metrics::route label);
// Whether one more request is counted under `label` than `before`, within five seconds: the
// session counts a request once its answer is written, which the client may read first.
bool counted_once_more(const test_server& server, metrics::route label, std::uint64_t before);

// One connection for a test that sends in pieces, with pauses, or more than the server reads.
class raw_client {
public:
    explicit raw_client(unsigned short port);
    // From `source` (127.0.0.2, say: another client's address on the loopback network).
    raw_client(unsigned short port, const boost::asio::ip::address& source);
    // False once the server has closed or reset the connection, or when the server has not
    // taken the bytes within `wait`.
    bool send(std::string_view bytes, std::chrono::milliseconds wait = std::chrono::milliseconds(10000));
    // What arrives until the server closes the connection or `wait` passes.
    std::string receive(std::chrono::milliseconds wait = std::chrono::milliseconds(3000));
    // What has arrived so far, without waiting; closed() says whether the server closed.
    std::string received_now();
    bool closed() const { return closed_; }
    // Ends the client's half of the connection, as a client that has sent all it will.
    void finish_sending();
    // Whether the server has closed the connection whole, told by sending a byte every few
    // milliseconds (which a lingering server reads and drops) until one fails or `wait` passes.
    bool closed_by_server(std::chrono::milliseconds wait);

private:
    boost::asio::io_context context_;
    boost::asio::ip::tcp::socket socket_;
    bool closed_ = false;
    bool send_failed_ = false;
};

// Sends `bytes` on a fresh connection; whatever comes back until the server closes or `wait` passes.
std::string raw_exchange(unsigned short port, std::string_view bytes,
                         std::chrono::milliseconds wait = std::chrono::milliseconds(3000));

// How many responses `bytes` holds (status lines at the start of a line).
std::size_t count_responses(std::string_view bytes);

// A valid wheel whose METADATA names `name` and `version`.
std::string make_wheel(std::string_view name, std::string_view version, std::string_view summary = "A test wheel",
                       std::string_view requires_python = "");

}  // namespace wheelhouse::testing
