#include "wheelhouse/transport/server.hpp"

#include <spdlog/spdlog.h>

namespace wheelhouse::transport {

server::server(server_options options, request_handler& handler)
    : options_(std::move(options)),
      log_(options_.access_log, options_.metrics),
      context_(static_cast<int>(std::max(1u, options_.threads))),
      listener_(std::make_shared<listener>(context_, handler, options_.limits, registry_, log_)),
      drain_timer_(context_) {}

server::~server() {
    context_.stop();
    wait();
}

result<void> server::open() {
    error_code ec;
    const auto address = net::ip::make_address(options_.host, ec);
    if (ec) return invalid("listen address '" + options_.host + "' is not an IP address");
    return listener_->open(tcp::endpoint(address, options_.port));
}

tcp::endpoint server::local_endpoint() const { return listener_->local_endpoint(); }

void server::start() {
    listener_->run();
    const unsigned count = std::max(1u, options_.threads);
    threads_.reserve(count);
    for (unsigned i = 0; i < count; ++i) threads_.emplace_back([this] { context_.run(); });
}

void server::wait() {
    for (auto& thread : threads_) {
        if (thread.joinable()) thread.join();
    }
    threads_.clear();
    log_.flush();
}

void server::drain(std::chrono::milliseconds deadline) {
    listener_->stop();
    registry_.drain_all();
    const auto until = std::chrono::steady_clock::now() + deadline;
    net::post(drain_timer_.get_executor(), [this, until] { poll_drain(until); });
}

void server::poll_drain(std::chrono::steady_clock::time_point deadline) {
    const auto open_sessions = registry_.size();
    const bool finished = open_sessions == 0 && listener_->stopped();
    if (finished || std::chrono::steady_clock::now() >= deadline) {
        if (open_sessions > 0) spdlog::warn("drain deadline passed with {} connections open; closing", open_sessions);
        context_.stop();
        return;
    }
    registry_.drain_all();  // sessions that finished a response since the last poll
    drain_timer_.expires_after(std::chrono::milliseconds(20));
    drain_timer_.async_wait([this, deadline](error_code ec) {
        if (!ec) poll_drain(deadline);
    });
}

}  // namespace wheelhouse::transport
