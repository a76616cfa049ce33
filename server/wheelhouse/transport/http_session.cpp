#include "wheelhouse/transport/http_session.hpp"

#include <array>
#include <cerrno>

#include <sys/sendfile.h>
#include <sys/socket.h>

#include <spdlog/spdlog.h>

#include "wheelhouse/transport/responses.hpp"

namespace wheelhouse::transport {
namespace {

// Bodies nobody asked for (a GET with a body) are read and dropped up to this size.
constexpr std::uint64_t unexpected_body_limit = 64 * 1024;

constexpr std::string_view continue_line = "HTTP/1.1 100 Continue\r\n\r\n";

bool is_quiet(const error_code& ec) {
    return ec == net::error::operation_aborted || ec == http::error::end_of_stream || ec == net::error::eof ||
           ec == beast::error::timeout || ec == net::error::connection_reset || ec == net::error::broken_pipe ||
           ec == net::error::not_connected;
}

bool expects_continue(const http::request_header<>& header) {
    const auto expect = header[http::field::expect];
    return beast::iequals(expect, "100-continue");
}

}  // namespace

http_session::http_session(tcp::socket&& socket, request_handler& handler, const session_limits& limits,
                           session_registry& registry, access_log& log)
    : stream_(std::move(socket)),
      stream_wait_(stream_.get_executor()),
      handler_(handler),
      limits_(limits),
      registry_(registry),
      log_(log) {
    error_code ec;
    // For the prepared write's first try (do_write_prepared); the asynchronous operations are
    // unaffected by it.
    stream_.socket().non_blocking(true, ec);
    const auto endpoint = stream_.socket().remote_endpoint(ec);
    if (!ec) {
        peer_address_ = endpoint.address();
        peer_ = peer_address_.to_string();
    } else {
        peer_ = "-";
    }
}

http_session::~http_session() {
    if (response_ && response_->stream) response_->stream->cancel();  // stops its producer
    registry_.remove(this);
}

void http_session::run() {
    registry_.add(shared_from_this());
    net::dispatch(stream_.get_executor(), beast::bind_front_handler(&http_session::do_read_header, shared_from_this()));
}

void http_session::drain() {
    net::post(stream_.get_executor(), [self = shared_from_this()] {
        self->draining_ = true;
        if (self->waiting_for_request_) self->stream_.socket().cancel();
    });
}

void http_session::do_read_header() {
    if (draining_) return do_close();
    header_parser_.emplace();
    header_parser_->header_limit(static_cast<std::uint32_t>(limits_.header_bytes));
    // The route decides the body's limit once it has seen the headers (start_body); Beast's
    // default of 1 MiB would refuse every larger upload before the route is asked.
    header_parser_->body_limit(boost::none);
    waiting_for_request_ = true;
    stream_.expires_after(limits_.idle_timeout);
    http::async_read_header(stream_, buffer_, *header_parser_,
                            [self = shared_from_this()](error_code ec, std::size_t) { self->on_read_header(ec); });
}

void http_session::on_read_header(error_code ec) {
    waiting_for_request_ = false;
    request_ = incoming_request{};
    request_started_ = std::chrono::steady_clock::now();
    request_.received_at = request_started_;
    if (ec == http::error::header_limit) {
        return respond_and_close(http::status::request_header_fields_too_large,
                                 "the request's headers are larger than " + std::to_string(limits_.header_bytes) +
                                     " bytes; send fewer or shorter headers");
    }
    if (ec && is_quiet(ec)) return do_close();
    if (ec) {
        return respond_and_close(http::status::bad_request, "malformed HTTP request (" + ec.message() + ")");
    }
    const auto& header = header_parser_->get();
    log_method_.assign(header.method_string());  // assign keeps the capacity of the last request's
    log_target_.assign(header.target());
    start_body(handler_.plan_body(header));
}

void http_session::start_body(body_plan plan) {
    request_.handler_state = std::move(plan.handler_state);
    if (plan.how == body_plan::kind::reject) {
        close_after_response_ = true;  // the body stays unread, so the connection cannot be reused
        return do_write(std::move(*plan.rejection));
    }
    if (header_parser_->is_done()) {
        if (plan.how == body_plan::kind::stream) {  // an empty body still goes through its sink
            if (auto finished = plan.sink->finish(); !finished)
                return respond_and_close(status_for(finished.error().kind), finished.error().message);
            request_.sink = std::move(plan.sink);
        }
        request_.header = std::move(header_parser_->release().base());
        return dispatch();
    }
    const bool send_continue = expects_continue(header_parser_->get());
    body_limit_ = plan.how == body_plan::kind::none ? unexpected_body_limit : plan.limit;
    // Beast checks a declared length against the limit only while parsing the header, which
    // ran without one; check it here so an oversized body is refused before any of it is read.
    if (auto declared = header_parser_->content_length(); declared && *declared > body_limit_) {
        close_after_response_ = true;
        return respond_and_close(http::status::payload_too_large,
                                 "the request body is larger than this server's limit of " +
                                     std::to_string(body_limit_) + " bytes");
    }
    buffer_.reserve(64 * 1024);  // read the body in large chunks, not the header's small ones
    if (plan.how == body_plan::kind::stream) {
        sink_parser_.emplace(std::move(*header_parser_));
        sink_parser_->body_limit(body_limit_);
        sink_parser_->get().body() = std::move(plan.sink);
    } else {
        string_parser_.emplace(std::move(*header_parser_));
        string_parser_->body_limit(body_limit_);
    }
    auto read_body = [this] {
        if (sink_parser_) do_read_body(*sink_parser_);
        else do_read_body(*string_parser_);
    };
    if (!send_continue) return read_body();
    // curl waits a second for this before sending a large body; answer at once.
    stream_.expires_after(limits_.write_timeout);
    net::async_write(stream_, net::buffer(continue_line.data(), continue_line.size()),
                     [self = shared_from_this(), read_body](error_code ec, std::size_t) {
                         if (ec) {
                             self->fail(ec, "write 100-continue");
                             return self->do_close();
                         }
                         read_body();
                     });
}

template <class Parser>
void http_session::do_read_body(Parser& parser) {
    stream_.expires_after(limits_.read_timeout);
    http::async_read_some(stream_, buffer_, parser,
                          [self = shared_from_this(), &parser](error_code ec, std::size_t) {
                              self->on_read_body(parser, ec);
                          });
}

template <class Parser>
void http_session::on_read_body(Parser& parser, error_code ec) {
    if (ec == http::error::body_limit) {
        discard_body();
        return respond_and_close(http::status::payload_too_large,
                                 "the request body is larger than this server's limit of " +
                                     std::to_string(body_limit_) + " bytes");
    }
    if (ec == beast::error::timeout) {
        discard_body();
        return respond_and_close(http::status::request_timeout,
                                 "the client stopped sending the request body; send it again");
    }
    if (ec) {
        std::optional<error> refusal;
        if constexpr (std::is_same_v<Parser, http::request_parser<sink_body>>) refusal = parser.get().body()->failure;
        discard_body();
        if (refusal) return respond_and_close(status_for(refusal->kind), refusal->message);
        fail(ec, "read body");
        return do_close();
    }
    if (!parser.is_done()) return do_read_body(parser);

    auto message = parser.release();
    request_.body_bytes = message.payload_size().value_or(0);
    if constexpr (std::is_same_v<Parser, http::request_parser<sink_body>>) {
        request_.sink = std::move(message.body());
        sink_parser_.reset();
    } else {
        request_.body = std::move(message.body());
        string_parser_.reset();
    }
    request_.header = std::move(message.base());
    dispatch();
}

void http_session::dispatch() {
    request_.peer = peer_address_;
    auto request = std::move(request_);
    request_ = incoming_request{};  // the handler owns the body's sink from here on
    handler_.handle(std::move(request), [self = shared_from_this()](outgoing_response response) {
        net::dispatch(self->stream_.get_executor(), [self, response = std::move(response)]() mutable {
            self->do_write(std::move(response));
        });
    });
}

void http_session::respond_and_close(http::status status, std::string message) {
    if (log_method_.empty()) log_method_ = "-";
    if (log_target_.empty()) log_target_ = "-";
    close_after_response_ = true;
    do_write(make_text_response_without_request(status, std::move(message)));
}

void http_session::do_write(outgoing_response response) {
    response_.emplace(std::move(response));
    const bool keep_alive = response_->message ? response_->message->keep_alive() : response_->prepared.keep_alive;
    if (!keep_alive || draining_) close_after_response_ = true;
    if (!response_->message) return do_write_prepared();
    do_write_some();
}

void http_session::do_write_prepared() {
    const auto& prepared = response_->prepared;
    const std::array<net::const_buffer, 2> buffers{
        net::buffer(prepared.head), prepared.body ? net::buffer(*prepared.body) : net::const_buffer()};
    // Most pages fit in the socket's send buffer: write now, and wait for the socket (under the
    // write deadline) only for what did not fit. The socket is non-blocking (see the constructor).
    error_code first_try;
    std::size_t written = 0;
    if (response_->file) {
        // MSG_MORE: the head waits for the file's first bytes and leaves in the same segment.
        const ssize_t sent = ::send(stream_.socket().native_handle(), prepared.head.data(), prepared.head.size(),
                                    MSG_MORE | MSG_NOSIGNAL);
        if (sent >= 0) written = static_cast<std::size_t>(sent);
        else first_try = error_code(errno, boost::system::system_category());
    } else {
        written = stream_.socket().write_some(buffers, first_try);
    }
    if (first_try && first_try != net::error::would_block && first_try != net::error::try_again) {
        fail(first_try, "write");
        return do_close();
    }
    if (written == net::buffer_size(buffers)) return after_prepared_head();
    beast::buffers_suffix<std::array<net::const_buffer, 2>> rest(buffers);
    rest.consume(written);
    stream_.expires_after(limits_.write_timeout);
    net::async_write(stream_, rest, [self = shared_from_this()](error_code ec, std::size_t) {
        if (ec) {
            self->fail(ec, "write");
            const bool body_follows = self->response_->stream || self->response_->file;
            return body_follows ? self->abort_response() : self->do_close();
        }
        self->after_prepared_head();
    });
}

void http_session::after_prepared_head() {
    if (response_->stream) return do_write_stream();
    if (response_->file) return do_send_file();
    finish_request();
}

void http_session::do_send_file() {
    auto& span = *response_->file;
    // One turn sends at most this much, then lets the thread's other connections have their turn.
    constexpr std::uint64_t turn_bytes = 4 * 1024 * 1024;
    std::uint64_t turn_left = turn_bytes;
    while (span.length > 0) {
        if (turn_left == 0) {
            net::post(stream_.get_executor(), [self = shared_from_this()] { self->do_send_file(); });
            return;
        }
        auto offset = static_cast<off_t>(span.offset);
        const auto want = static_cast<std::size_t>(std::min(span.length, turn_left));
        const ssize_t sent = ::sendfile(stream_.socket().native_handle(), span.file->get(), &offset, want);
        if (sent > 0) {
            const auto bytes = static_cast<std::uint64_t>(sent);
            span.offset += bytes;
            span.length -= bytes;
            turn_left -= bytes;
            continue;
        }
        if (sent < 0 && errno == EINTR) continue;
        if (sent < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return wait_to_send_file();
        if (sent == 0) {
            spdlog::error("{} {} {}: the file ended {} bytes short of its length; closing", peer_, log_method_,
                          log_target_, span.length);
        } else {
            fail(error_code(errno, boost::system::system_category()), "sendfile");
        }
        return abort_response();
    }
    finish_request();
}

void http_session::wait_to_send_file() {
    // The socket's buffer is full: wait for the client to read, at most the write deadline.
    stream_wait_.expires_after(limits_.write_timeout);
    stream_wait_.async_wait([weak = weak_from_this()](error_code ec) {
        auto self = weak.lock();
        // Re-armed since (the socket was writable in time, and the next wait began): not ours.
        if (ec || !self || self->stream_wait_.expiry() > std::chrono::steady_clock::now()) return;
        spdlog::debug("{} {} {}: the client read nothing for {} s; closing", self->peer_, self->log_method_,
                      self->log_target_,
                      std::chrono::duration_cast<std::chrono::seconds>(self->limits_.write_timeout).count());
        error_code ignored;
        self->stream_.socket().cancel(ignored);
    });
    stream_.socket().async_wait(tcp::socket::wait_write, [self = shared_from_this()](error_code ec) {
        self->stream_wait_.cancel();
        if (ec) {
            self->fail(ec, "write");
            return self->abort_response();
        }
        self->do_send_file();
    });
}

void http_session::do_write_stream() {
    auto& source = *response_->stream;
    const auto piece = source.next();
    switch (piece.what) {
        case body_source::state::ready:
            stream_.expires_after(limits_.write_timeout);
            stream_.async_write_some(net::buffer(piece.bytes.data(), piece.bytes.size()),
                                     [self = shared_from_this()](error_code ec, std::size_t bytes) {
                                         if (ec) {
                                             self->fail(ec, "write");
                                             return self->abort_response();
                                         }
                                         self->response_->stream->consume(bytes);
                                         self->do_write_stream();
                                     });
            return;
        case body_source::state::pending: return wait_for_stream();
        case body_source::state::finished: return finish_request();
        case body_source::state::failed:
            spdlog::debug("{} {} {}: the body failed after its headers; closing", peer_, log_method_, log_target_);
            return abort_response();
    }
}

void http_session::wait_for_stream() {
    // The timer's handler keeps the session alive (the wake holds it only weakly, so a session
    // dropped with its context breaks no cycle); it fires early when the producer wakes us.
    stream_wait_.expires_after(limits_.write_timeout);
    stream_wait_.async_wait([self = shared_from_this()](error_code ec) {
        if (ec == net::error::operation_aborted) return self->do_write_stream();
        spdlog::warn("{} {} {}: no body bytes for {} s; closing", self->peer_, self->log_method_, self->log_target_,
                     std::chrono::duration_cast<std::chrono::seconds>(self->limits_.write_timeout).count());
        self->abort_response();
    });
    response_->stream->on_ready([weak = weak_from_this()] {
        if (auto self = weak.lock()) net::post(self->stream_.get_executor(), [self] { self->stream_wait_.cancel(); });
    });
}

void http_session::abort_response() {
    // Closing short of Content-Length tells the client the body is incomplete.
    const auto elapsed = std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() -
                                                                             request_started_);
    log_.record(peer_, log_method_, log_target_, response_->status, response_->body_bytes, elapsed);
    if (response_->stream) response_->stream->cancel();
    do_close();
}

void http_session::do_write_some() {
    error_code ec;
    const auto buffers = response_->message->prepare(ec);
    if (ec) {
        fail(ec, "serialize");
        return do_close();
    }
    stream_.expires_after(limits_.write_timeout);
    stream_.async_write_some(buffers, beast::bind_front_handler(&http_session::on_write_some, shared_from_this()));
}

void http_session::on_write_some(error_code ec, std::size_t bytes) {
    if (ec) {
        fail(ec, "write");
        return do_close();
    }
    response_->message->consume(bytes);
    if (!response_->message->is_done()) return do_write_some();
    finish_request();
}

void http_session::finish_request() {
    const auto elapsed = std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() -
                                                                             request_started_);
    log_.record(peer_, log_method_, log_target_, response_->status, response_->body_bytes, elapsed);
    response_.reset();
    log_method_.clear();
    log_target_.clear();
    if (close_after_response_) return do_close();
    do_read_header();
}

void http_session::do_close() {
    error_code ec;
    stream_.socket().shutdown(tcp::socket::shutdown_send, ec);
    stream_.socket().close(ec);
}

void http_session::discard_body() noexcept {
    // Dropping the sink removes what it stored (an upload's spool file goes with it).
    sink_parser_.reset();
    string_parser_.reset();
}

void http_session::fail(error_code ec, const char* what) {
    if (is_quiet(ec)) return;
    spdlog::debug("{} {}: {}", peer_, what, ec.message());
}

}  // namespace wheelhouse::transport
