#include "wheelhouse/transport/server.hpp"

#include <algorithm>
#include <csignal>

#include <spdlog/spdlog.h>

namespace wheelhouse::transport {

namespace {

std::vector<std::unique_ptr<net::io_context>> make_contexts(unsigned threads) {
    std::vector<std::unique_ptr<net::io_context>> contexts;
    for (unsigned i = 0; i < std::max(1u, threads); ++i) contexts.push_back(std::make_unique<net::io_context>(1));
    return contexts;
}

std::vector<net::io_context*> pointers_to(const std::vector<std::unique_ptr<net::io_context>>& contexts) {
    std::vector<net::io_context*> pointers;
    for (const auto& context : contexts) pointers.push_back(context.get());
    return pointers;
}

server_options with_defaults(server_options options) {
    if (options.limits.max_connections == 0)
        options.limits.max_connections = default_max_connections(options.threads);
    return options;
}

// Runs a context until it is stopped. A handler that throws past its connection's own guard
// (http_session::guarded) is logged, and the thread goes on serving every other connection:
// the handler's objects, and the connection they held, are gone with the exception.
void run_contained(net::io_context& context) {
    for (;;) {
        try {
            context.run();
            return;
        } catch (const std::exception& failure) {
            spdlog::error("a handler threw outside any connection's guard: {}; serving on", failure.what());
        } catch (...) {
            spdlog::error("a handler threw an exception of unknown type outside any connection's guard; serving on");
        }
    }
}

}  // namespace

server::server(server_options options, request_handler& handler)
    : options_(with_defaults(std::move(options))),
      log_(options_.access_log, options_.metrics),
      contexts_(make_contexts(options_.threads)),
      redirect_handler_(options_.redirect_origin),
      drain_timer_(*contexts_.front()) {
    for (const auto& context : contexts_) {
        listeners_.push_back(std::make_shared<listener>(*context, std::vector{context.get()}, handler, options_.tls,
                                                        options_.limits, registry_, log_));
    }
    if (options_.redirect_http) {
        redirect_listener_ = std::make_shared<listener>(*contexts_.front(), pointers_to(contexts_), redirect_handler_,
                                                        nullptr, options_.limits, registry_, log_);
    }
    // sendfile(2) has no MSG_NOSIGNAL: a client that hangs up mid-download must be an EPIPE for
    // its own session, not a signal that ends the process.
    ::signal(SIGPIPE, SIG_IGN);
    // Likewise a write past a file-size limit (ulimit -f, LimitFSIZE=): EFBIG for the one write,
    // which falls back or refuses as any failed write does (a large page's copy is written on an
    // anonymous GET), not SIGXFSZ's default of ending the process.
    ::signal(SIGXFSZ, SIG_IGN);
    // A context with no connection yet must not return from run().
    for (const auto& context : contexts_) keep_running_.push_back(net::make_work_guard(*context));
}

server::~server() {
    stop_contexts();
    wait();
}

void server::stop_contexts() {
    for (const auto& context : contexts_) context->stop();
}

namespace {

result<tcp::endpoint> endpoint_of(const std::string& host, unsigned short port) {
    error_code ec;
    const auto address = net::ip::make_address(host, ec);
    if (ec) return invalid("listen address '" + host + "' is not an IP address");
    return tcp::endpoint(address, port);
}

}  // namespace

result<void> server::open() {
    if (auto log_ready = log_.ready(); !log_ready) return log_ready;
    const auto endpoint = endpoint_of(options_.host, options_.port);
    if (!endpoint) return endpoint.error();
    if (auto opened = listeners_.front()->open(*endpoint); !opened) return opened;
    for (std::size_t i = 1; i < listeners_.size(); ++i) {
        if (auto shared = listeners_[i]->share(*listeners_.front()); !shared) return shared;
    }
    if (!redirect_listener_) return {};
    redirect_handler_.point_at(local_endpoint().port());
    const auto redirect = endpoint_of(options_.redirect_http->first, options_.redirect_http->second);
    if (!redirect) return redirect.error();
    return redirect_listener_->open(*redirect);
}

tcp::endpoint server::local_endpoint() const { return listeners_.front()->local_endpoint(); }

std::optional<tcp::endpoint> server::redirect_endpoint() const {
    if (!redirect_listener_) return std::nullopt;
    return redirect_listener_->local_endpoint();
}

void server::start() {
    for (const auto& each : listeners_) each->run();
    if (redirect_listener_) redirect_listener_->run();
    threads_.reserve(contexts_.size());
    for (const auto& context : contexts_) threads_.emplace_back([&context = *context] { run_contained(context); });
}

void server::wait() {
    for (auto& thread : threads_) {
        if (thread.joinable()) thread.join();
    }
    threads_.clear();
    log_.flush();
}

void server::drain(std::chrono::milliseconds deadline) {
    for (const auto& each : listeners_) each->stop();
    if (redirect_listener_) redirect_listener_->stop();
    registry_.drain_all();
    const auto until = std::chrono::steady_clock::now() + deadline;
    net::post(drain_timer_.get_executor(), [this, until] { poll_drain(until); });
}

void server::poll_drain(std::chrono::steady_clock::time_point deadline) {
    const auto open_sessions = registry_.size();
    const bool finished = open_sessions == 0 &&
                          std::all_of(listeners_.begin(), listeners_.end(), [](const auto& each) { return each->stopped(); }) &&
                          (!redirect_listener_ || redirect_listener_->stopped());
    if (finished || std::chrono::steady_clock::now() >= deadline) {
        if (open_sessions > 0) spdlog::warn("drain deadline passed with {} connections open; closing", open_sessions);
        stop_contexts();
        return;
    }
    registry_.drain_all();  // sessions that finished a response since the last poll
    drain_timer_.expires_after(std::chrono::milliseconds(20));
    drain_timer_.async_wait([this, deadline](error_code ec) {
        if (!ec) poll_drain(deadline);
    });
}

}  // namespace wheelhouse::transport
