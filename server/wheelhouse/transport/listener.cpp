#include "wheelhouse/transport/listener.hpp"

#include <array>
#include <cerrno>
#include <cstring>

#include <sys/socket.h>
#include <unistd.h>

#include <spdlog/spdlog.h>

#include "wheelhouse/transport/http_session.hpp"
#include "wheelhouse/transport/request_refusals.hpp"
#include "wheelhouse/transport/responses.hpp"

namespace wheelhouse::transport {
namespace {

constexpr std::chrono::milliseconds accept_retry{100};
constexpr std::chrono::seconds refusal_warning_interval{10};

std::string unavailable(const std::string& message, http::verb method) {
    http::fields retry;
    retry.set(http::field::retry_after, "1");
    return serialize(
        make_text_response_without_request(http::status::service_unavailable, message, std::move(retry), method));
}

}  // namespace

// 503, not 429: pip retries a 503 after its Retry-After (urllib3's default), and not a 429.
listener::refusal listener::service_unavailable(const std::string& message) {
    return {unavailable(message, http::verb::get), unavailable(message, http::verb::head)};
}

listener::listener(net::io_context& context, std::vector<net::io_context*> session_contexts,
                   request_handler& handler, std::shared_ptr<const tls_certificate> tls,
                   const session_limits& limits, session_registry& registry, access_log& log)
    : session_contexts_(std::move(session_contexts)),
      tls_(std::move(tls)),
      acceptor_(context),
      retry_timer_(acceptor_.get_executor()),
      handler_(handler),
      limits_(limits),
      registry_(registry),
      log_(log),
      busy_(service_unavailable("retry in a second: this server has its limit of " +
                                std::to_string(limits.max_connections) +
                                " connections open (--max-connections), each busy with a request")),
      over_share_(service_unavailable("retry in a second, or close some of your connections: your address has its "
                                      "limit of " + std::to_string(limits.max_connections_per_address) +
                                      " connections open (--max-connections-per-address)")) {}

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

result<void> listener::share(listener& first) {
    const int copy = ::dup(first.acceptor_.native_handle());
    if (copy < 0) return make_error(error_kind::internal, std::string("cannot share the listening socket: ") +
                                                              std::strerror(errno));
    error_code ec;
    acceptor_.assign(first.local_endpoint().protocol(), copy, ec);
    if (ec) {
        ::close(copy);
        return make_error(error_kind::internal, "cannot share the listening socket: " + ec.message());
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
    if (ec) return back_off(ec);
    if (std::exchange(accept_failing_, false)) spdlog::info("accepting connections again");
    try {
        admit(socket);
    } catch (const std::exception& failure) {  // out of memory, say: this connection alone is lost
        spdlog::error("could not start a session for a new connection: {}", failure.what());
    }
    do_accept();
}

void listener::admit(tcp::socket& socket) {
    error_code ec;
    const auto peer = socket.remote_endpoint(ec).address();
    if (ec) return;  // reset before it was accepted: nothing to answer
    const auto admitting = registry_.hold_admission();
    const auto share = limits_.max_connections_per_address;
    if (share != 0 && registry_.counted_from(peer) >= share) {
        ++registry_.tally().refused_over_share;
        return refuse(socket, over_share_);
    }
    if (registry_.counted() >= limits_.max_connections) {
        if (!registry_.make_room(most_giving_way(limits_.max_connections))) {
            ++registry_.tally().refused_busy;
            return refuse(socket, busy_);
        }
        ++registry_.tally().made_room;
        warn_now_and_then();
    }
    socket.set_option(tcp::no_delay(true), ec);
    std::unique_ptr<tls_channel> channel;
    if (tls_) {
        SSL* ssl = tls_->new_connection();
        if (!ssl) return spdlog::error("could not start TLS for a new connection: out of memory");
        channel = std::make_unique<tls_channel>(ssl, socket.native_handle());
    }
    std::make_shared<http_session>(std::move(socket), std::move(channel), handler_, limits_, registry_, log_)->run();
}

void listener::back_off(error_code ec) {
    // Out of descriptors (EMFILE, ENFILE) and the like: the connection waits in the kernel's
    // queue while we wait, instead of spinning on the error.
    if (!std::exchange(accept_failing_, true))
        spdlog::warn("accept failed: {}; retrying every {} ms until it succeeds", ec.message(), accept_retry.count());
    retry_timer_.expires_after(accept_retry);
    retry_timer_.async_wait([self = shared_from_this()](error_code wait_ec) {
        if (!wait_ec) self->do_accept();
    });
}

void listener::refuse(tcp::socket& socket, const refusal& answer) {
    // Answered without a session and without parsing the request: a refused connection holds
    // its descriptor for microseconds. Over TLS nothing can be said before a handshake, which
    // costs what the cap is there to save: the connection is closed, and clients retry it.
    if (tls_) {
        error_code ignored;
        socket.close(ignored);
        return warn_now_and_then();
    }
    // Whether what the client sent already is a HEAD (a request still on its way cannot be told,
    // and gets the body).
    std::array<char, 4096> scratch{};
    const auto received = ::recv(socket.native_handle(), scratch.data(), scratch.size(), MSG_DONTWAIT);
    const bool head = received > 0 && starts_head_request({scratch.data(), static_cast<std::size_t>(received)});
    answer_and_close(socket, head ? answer.head_only : answer.with_body);
    warn_now_and_then();
}

void listener::warn_now_and_then() {  // under registry_.hold_admission(), from admit()
    auto& tally = registry_.tally();
    const auto now = std::chrono::steady_clock::now();
    if (now - tally.last_warning < refusal_warning_interval) return;
    if (tally.refused_busy > 0) {
        spdlog::warn("{} connections refused with 503 since the last warning: all {} connections the server "
                     "allows (--max-connections) were busy with requests", tally.refused_busy, limits_.max_connections);
    }
    if (tally.refused_over_share > 0) {
        spdlog::warn("{} connections refused with 503 since the last warning: their client had {} open "
                     "(--max-connections-per-address)", tally.refused_over_share, limits_.max_connections_per_address);
    }
    if (tally.made_room > 0) {
        spdlog::warn("{} lingering or idle connections closed since the last warning to make room for new ones: "
                     "all {} connections the server allows (--max-connections) were open", tally.made_room,
                     limits_.max_connections);
    }
    tally.refused_busy = tally.refused_over_share = tally.made_room = 0;
    tally.last_warning = now;
}

}  // namespace wheelhouse::transport
