#include "wheelhouse/transport/listener.hpp"

#include <spdlog/spdlog.h>

#include "wheelhouse/transport/http_session.hpp"

namespace wheelhouse::transport {

listener::listener(net::io_context& context, std::vector<net::io_context*> session_contexts,
                   request_handler& handler, const session_limits& limits, session_registry& registry,
                   access_log& log)
    : session_contexts_(std::move(session_contexts)),
      acceptor_(context),
      retry_timer_(acceptor_.get_executor()),
      handler_(handler),
      limits_(limits),
      registry_(registry),
      log_(log) {}

result<void> listener::open(const tcp::endpoint& endpoint) {
    const auto where = endpoint.address().to_string() + ":" + std::to_string(endpoint.port());
    error_code ec;
    acceptor_.open(endpoint.protocol(), ec);
    if (!ec) acceptor_.set_option(net::socket_base::reuse_address(true), ec);
    if (!ec) acceptor_.bind(endpoint, ec);
    if (!ec) acceptor_.listen(net::socket_base::max_listen_connections, ec);
    if (ec) {
        error_code ignored;
        acceptor_.close(ignored);
        return make_error(error_kind::internal, "cannot listen on " + where + ": " + ec.message());
    }
    return {};
}

tcp::endpoint listener::local_endpoint() const {
    error_code ec;
    return acceptor_.local_endpoint(ec);
}

void listener::run() {
    net::dispatch(acceptor_.get_executor(), beast::bind_front_handler(&listener::do_accept, shared_from_this()));
}

void listener::stop() {
    net::post(acceptor_.get_executor(), [self = shared_from_this()] {
        error_code ec;
        self->acceptor_.close(ec);
        self->retry_timer_.cancel();
        self->stopped_ = true;
    });
}

void listener::do_accept() {
    if (!acceptor_.is_open()) return;
    auto& next = *session_contexts_[next_context_];
    next_context_ = (next_context_ + 1) % session_contexts_.size();
    acceptor_.async_accept(next, beast::bind_front_handler(&listener::on_accept, shared_from_this()));
}

void listener::on_accept(error_code ec, tcp::socket socket) {
    if (ec == net::error::operation_aborted || !acceptor_.is_open()) return;
    if (ec) {
        // Out of descriptors and the like: back off instead of spinning on the error.
        spdlog::warn("accept failed: {}; retrying in 100 ms", ec.message());
        retry_timer_.expires_after(std::chrono::milliseconds(100));
        retry_timer_.async_wait([self = shared_from_this()](error_code wait_ec) {
            if (!wait_ec) self->do_accept();
        });
        return;
    }
    error_code ignored;
    socket.set_option(tcp::no_delay(true), ignored);
    std::make_shared<http_session>(std::move(socket), handler_, limits_, registry_, log_)->run();
    do_accept();
}

}  // namespace wheelhouse::transport
