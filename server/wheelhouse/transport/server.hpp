#pragma once
// The HTTP server's life: bind, run I/O threads, drain on request, stop.

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <thread>
#include <vector>

#include "wheelhouse/result.hpp"
#include "wheelhouse/transport/access_log.hpp"
#include "wheelhouse/transport/https_redirect.hpp"
#include "wheelhouse/transport/listener.hpp"
#include "wheelhouse/transport/net.hpp"
#include "wheelhouse/transport/request_handler.hpp"
#include "wheelhouse/transport/session_limits.hpp"
#include "wheelhouse/transport/session_registry.hpp"
#include "wheelhouse/transport/tls_certificate.hpp"

namespace wheelhouse::transport {

struct server_options {
    std::string host = "127.0.0.1";
    unsigned short port = 8080;  // 0 picks a free port
    // HTTPS on host:port with this certificate; null: plain HTTP.
    std::shared_ptr<const tls_certificate> tls;
    // A second, plain-HTTP address that only sends clients to the HTTPS one (with tls only).
    std::optional<std::pair<std::string, unsigned short>> redirect_http;
    // Where that listener sends clients ("https://HOST[:PORT]"); empty: the Host they sent.
    std::string redirect_origin;
    unsigned threads = 1;
    session_limits limits;
    std::string access_log = "-";  // "-" standard output, "off", or a file
    metrics::server_metrics* metrics = nullptr;  // counts every request when given; outlives the server
};

class server {
public:
    server(server_options options, request_handler& handler);
    ~server();
    server(const server&) = delete;
    server& operator=(const server&) = delete;

    // Checks the access log can be written, binds and listens. Thread safety: call once, before start().
    result<void> open();
    tcp::endpoint local_endpoint() const;
    // The plain-HTTP address that redirects to HTTPS, when there is one.
    std::optional<tcp::endpoint> redirect_endpoint() const;
    // The limits in force (max_connections resolved from the descriptor limit when it was 0).
    const session_limits& limits() const noexcept { return options_.limits; }
    // The first I/O thread's context, for the caller's own timers and signals.
    net::io_context& context() noexcept { return *contexts_.front(); }

    // Runs the I/O threads in the background; wait() joins them.
    void start();
    void wait();

    // Stops accepting, closes idle connections, lets requests in flight finish, and stops
    // the I/O threads when none is left or the deadline passes. Thread safety: any thread.
    void drain(std::chrono::milliseconds deadline);

private:
    void poll_drain(std::chrono::steady_clock::time_point deadline);
    void stop_contexts();

    server_options options_;
    access_log log_;
    session_registry registry_;
    // After the registry and the log: destroying a context destroys the handlers still
    // queued, and with them sessions that remove themselves from the registry.
    // One context a thread, each run by that thread alone: a connection stays on one context,
    // so its handlers never run concurrently and need no strand. Each accepts for itself from
    // the one listening socket; the first also takes the redirects.
    std::vector<std::unique_ptr<net::io_context>> contexts_;
    std::vector<net::executor_work_guard<net::io_context::executor_type>> keep_running_;
    std::vector<std::shared_ptr<listener>> listeners_;  // one a context; the first opened the socket
    https_redirect redirect_handler_;
    std::shared_ptr<listener> redirect_listener_;  // null without redirect_http
    net::steady_timer drain_timer_;
    std::vector<std::thread> threads_;
};

}  // namespace wheelhouse::transport
