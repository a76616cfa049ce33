#include "wheelhouse/transport/http_session.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <cerrno>
#include <cstdint>

#include <sys/sendfile.h>
#include <unistd.h>
#include <sys/socket.h>

#include <spdlog/spdlog.h>

#include "wheelhouse/transport/responses.hpp"

namespace wheelhouse::transport {
namespace {

// Bodies nobody asked for (a GET with a body) are read and dropped up to this size.
constexpr std::uint64_t unexpected_body_limit = 64 * 1024;

// The read buffer's bound, and the size of one read: a header block, chunk-size line or trailer
// is parsed whole in it, so each has a limit well below this (session_limits).
constexpr std::size_t read_buffer_bytes = 64 * 1024;

constexpr std::string_view continue_line = "HTTP/1.1 100 Continue\r\n\r\n";

// Over TLS, what one write stages for OpenSSL at most: four full records.
constexpr std::size_t tls_stage_bytes = 64 * 1024;

// One turn of a download sends at most this much, then lets the thread's other connections
// have their turn.
constexpr std::uint64_t turn_bytes = 4 * 1024 * 1024;

bool is_quiet(const error_code& ec) {
    return ec == net::error::operation_aborted || ec == http::error::end_of_stream || ec == net::error::eof ||
           ec == beast::error::timeout || ec == net::error::connection_reset || ec == net::error::broken_pipe ||
           ec == net::error::not_connected;
}

bool expects_continue(const http::request_header<>& header) {
    // In any Expect field: a client that sent two is waiting all the same.
    return std::any_of(header.begin(), header.end(), [](const auto& field) {
        return field.name() == http::field::expect && beast::iequals(field.value(), "100-continue");
    });
}

// "0", "000;name=value": a last-chunk line (RFC 9112 §7.1) whose extension's quotes all close.
bool is_last_chunk_line(std::string_view line) {
    const auto size_end = line.find_first_not_of('0');
    if (line.empty() || size_end == 0) return false;
    if (size_end != std::string_view::npos && std::isxdigit(static_cast<unsigned char>(line[size_end]))) return false;
    bool quoted = false;
    for (std::size_t i = 0; i < line.size(); ++i) {
        if (quoted && line[i] == '\\') ++i;
        else if (line[i] == '"') quoted = !quoted;
    }
    return !quoted;
}

}  // namespace

// Wraps each completion handler: an exception from a request or a handler ends this
// connection, never the I/O thread with every other connection on it.
template <class Step>
auto http_session::guarded(Step step) {
    return [self = shared_from_this(), step = std::move(step)](auto&&... args) mutable {
        if (self->closed_) return;
        try {
            step(std::forward<decltype(args)>(args)...);
        } catch (const std::exception& failure) {
            self->contain(failure.what());
        } catch (...) {
            self->contain("an exception of unknown type");
        }
    };
}

void http_session::contain(const char* what) noexcept {
    if (contained_) return do_close();  // the 500 below failed too: logged once already
    contained_ = true;
    try {
        spdlog::error("{} {} {}: {}; closing this connection", peer_, log_method_.empty() ? "-" : log_method_,
                      log_target_.empty() ? "-" : log_target_, what);
        discard_body();
        // Nothing of a response written yet: say so, rather than leave the client guessing.
        if (!response_ && !read_pending_) {
            return respond_and_close(http::status::internal_server_error,
                                     "try again, and tell the server's administrator if it fails again: the server "
                                     "failed on this request and logged why");
        }
    } catch (...) {
    }
    do_close();
}

http_session::http_session(tcp::socket&& socket, std::unique_ptr<tls_channel> tls, request_handler& handler,
                           const session_limits& limits, session_registry& registry, access_log& log)
    : stream_(std::move(socket)),
      tls_(std::move(tls)),
      stream_wait_(stream_.get_executor()),
      read_timer_(stream_.get_executor()),
      buffer_(read_buffer_bytes),
      handler_(handler),
      limits_(limits),
      registry_(registry),
      log_(log),
      chunk_header_check_([this](std::uint64_t size, std::string_view extensions, error_code& ec) {
          on_chunk_header(size, extensions, ec);
      }) {
    error_code ec;
    // For the prepared write's first try (do_write_head), and for OpenSSL, which reads and
    // writes the socket itself (tls_channel); the asynchronous operations are unaffected by it.
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
    cancel_streamed_body();  // stops its producer
    if (registration_) registry_.remove(*registration_);
}

void http_session::run() {
    registration_ = registry_.add(shared_from_this(), peer_address_);
    net::dispatch(stream_.get_executor(), guarded([this] { tls_ ? start_handshake() : do_read_header(); }));
}

void http_session::start_handshake() {
    reading_ = reading::handshake;
    waiting_for_request_ = true;
    phase_deadline_ = clock::now() + limits_.idle_timeout;
    set_activity(session_registry::activity::idle);
    read_pending_ = true;
    arm_read_deadline();
    stream_.socket().async_wait(tcp::socket::wait_read, guarded([this](error_code ec) {
        read_pending_ = false;
        waiting_for_request_ = false;
        if (ec) return on_read_failed(ec);
        if (plain_http_arrived()) return answer_plain_http();
        set_activity(session_registry::activity::busy);
        phase_deadline_ = clock::now() + std::min(limits_.handshake_timeout, limits_.idle_timeout);
        arm_read_deadline();
        continue_handshake();
    }));
}

void http_session::continue_handshake() {
    // Not stopped by draining_: a client whose hello has arrived sends its request next, which
    // is answered (give_way and drain close only what has sent nothing).
    const auto step = tls_->handshake();
    switch (step.what) {
        case tls_channel::outcome::done:
            // Its first request is on its way (clients send it with or right after their Finished):
            // busy until it is read, under the handshake's deadline, so it never gives way first.
            reading_ = reading::nothing;
            first_request_after_handshake_ = true;
            return do_read_header();
        case tls_channel::outcome::want_read:
        case tls_channel::outcome::want_write:
            read_pending_ = true;
            stream_.socket().async_wait(
                step.what == tls_channel::outcome::want_read ? tcp::socket::wait_read : tcp::socket::wait_write,
                guarded([this](error_code ec) {
                    read_pending_ = false;
                    if (ec) return on_read_failed(ec);
                    continue_handshake();
                }));
            return;
        case tls_channel::outcome::closed: return do_close();
        case tls_channel::outcome::failed:
            if (tls_->plain_http_request()) return answer_plain_http();
            spdlog::debug("{}: TLS handshake failed: {}", peer_, tls_->reason());
            return do_close();
    }
}

bool http_session::plain_http_arrived() {
    // A TLS connection begins with a handshake record (type 22) or an SSLv2 hello (top bit set);
    // an HTTP request with its method, an upper-case token.
    char first = 0;
    const auto peeked = ::recv(stream_.socket().native_handle(), &first, 1, MSG_PEEK | MSG_DONTWAIT);
    return peeked == 1 && first >= 'A' && first <= 'Z';
}

void http_session::answer_plain_http() {
    // In plain text, as nginx does: the client reads a reason, not a handshake failure.
    static const auto answer_to = [](http::verb method) {
        return serialize(make_text_response_without_request(
            http::status::bad_request, "use https:// for this address: it speaks only HTTPS", {}, method));
    };
    static const std::string with_body = answer_to(http::verb::get);
    static const std::string head_only = answer_to(http::verb::head);
    std::array<char, 5> start{};
    const auto peeked = ::recv(stream_.socket().native_handle(), start.data(), start.size(), MSG_PEEK | MSG_DONTWAIT);
    const bool head = peeked > 0 && starts_head_request({start.data(), static_cast<std::size_t>(peeked)});
    closed_ = true;
    reading_ = reading::nothing;
    read_timer_.cancel();
    answer_and_close(stream_.socket(), head ? head_only : with_body);
}

void http_session::drain() {
    net::post(stream_.get_executor(), guarded([this] {
        draining_ = true;
        error_code ignored;
        if (waiting_for_request_ || reading_ == reading::linger) stream_.socket().cancel(ignored);
    }));
}

void http_session::give_way() {
    net::post(stream_.get_executor(), guarded([this] {
        spdlog::debug("{}: closing this {} connection to make room for a new one (--max-connections)", peer_,
                      reading_ == reading::linger ? "lingering" : "idle");
        draining_ = true;
        // Picked while idle, a request may have arrived since (in the kernel's buffer or OpenSSL's,
        // not yet read): that one is answered.
        const bool idle = waiting_for_request_ && !request_arriving();
        error_code ignored;
        if (idle || reading_ == reading::linger) stream_.socket().cancel(ignored);
    }));
}

void http_session::set_activity(session_registry::activity now) {
    if (activity_ == now || !registration_) return;
    activity_ = now;
    registry_.set_activity(*registration_, now);
}

void http_session::do_read_header() {
    if (draining_ && !first_request_after_handshake_) return do_close();
    header_parser_.emplace();
    header_parser_->header_limit(static_cast<std::uint32_t>(limits_.header_bytes));
    // The route decides the body's limit once it has seen the headers (start_body); Beast's
    // default of 1 MiB would refuse every larger upload before the route is asked.
    header_parser_->body_limit(boost::none);
    waiting_for_request_ = true;
    header_block_bytes_ = 0;
    refusal_.reset();
    head_request_ = false;
    reading_ = reading::header;
    // The whole header block within the idle timeout: a client cannot stretch it by trickling.
    const bool fresh = std::exchange(first_request_after_handshake_, false);
    phase_deadline_ = fresh ? phase_deadline_ : clock::now() + limits_.idle_timeout;
    arm_read_deadline();
    if (buffer_.size() == 0 && !fresh) set_activity(session_registry::activity::idle);
    parse_header();  // a pipelined request may be in the buffer already
}

void http_session::parse_header() {
    while (buffer_.size() > 0) {
        error_code ec;
        const auto used = header_parser_->put(buffer_.data(), ec);
        buffer_.consume(used);
        header_block_bytes_ += used;
        if (ec == http::error::need_more || (!ec && used == 0)) break;
        if (ec || header_parser_->is_header_done()) return on_header(ec);
    }
    read_more();
}

void http_session::on_header(error_code ec) {
    waiting_for_request_ = false;
    reading_ = reading::nothing;
    request_ = incoming_request{};
    request_started_ = clock::now();
    request_.received_at = request_started_;
    if (ec) {
        head_request_ = unread_header_is_head();
        auto refused = header_refusal(ec, limits_);
        return respond_and_close(refused.status, std::move(refused.message));
    }
    const auto& header = header_parser_->get();
    head_request_ = header.method() == http::verb::head;
    log_method_.assign(header.method_string());  // assign keeps the capacity of the last request's
    log_target_.assign(header.target());
    if (auto refused = check_framing(header)) return respond_and_close(refused->status, std::move(refused->message));
    start_body(handler_.plan_body(header));
}

void http_session::start_body(body_plan plan) {
    request_.handler_state = std::move(plan.handler_state);
    log_route_ = plan.label;
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
        request_.header = std::move(header_parser_->get().base());  // release() would move it twice
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
    if (header_parser_->chunked()) chunked_header_.emplace(header_parser_->get().base());
    if (plan.how == body_plan::kind::stream) {
        sink_parser_.emplace(std::move(*header_parser_));
        sink_parser_->body_limit(body_limit_);
        sink_parser_->get().body() = std::move(plan.sink);
        sink_parser_->on_chunk_header(chunk_header_check_);
        sink_parser_->eager(true);
    } else {
        string_parser_.emplace(std::move(*header_parser_));
        string_parser_->body_limit(body_limit_);
        string_parser_->on_chunk_header(chunk_header_check_);
        string_parser_->eager(true);
    }
    if (!send_continue) return begin_body();
    // curl waits a second for this before sending a large body; answer at once.
    write_all(net::buffer(continue_line.data(), continue_line.size()), [this](error_code ec) {
        if (ec) {
            fail(ec, "write 100-continue");
            return do_close();
        }
        begin_body();
    });
}

void http_session::begin_body() {
    reading_ = reading::body;
    paced_since_ = last_progress_ = clock::now();
    paced_bytes_ = 0;
    chunk_extension_bytes_ = 0;
    arm_read_deadline();
    continue_reading();  // what came with the header first
}

template <class Parser>
void http_session::parse_body(Parser& parser) {
    while (!parser.is_done() && buffer_.size() > 0) {
        error_code ec;
        const auto used = parser.put(buffer_.data(), ec);
        buffer_.consume(used);
        if (ec == http::error::need_more || (!ec && used == 0)) break;
        if (ec) return refuse_body(parser, ec);
    }
    if (parser.is_done()) return finish_body(parser);
    if (auto refused = check_unparsed(parser.chunked())) {
        discard_body();
        return respond_and_close(refused->status, std::move(refused->message));
    }
    read_more();
}

template <class Parser>
void http_session::refuse_body(Parser& parser, error_code ec) {
    std::optional<error> sink_failure;
    if constexpr (std::is_same_v<Parser, http::request_parser<sink_body>>) sink_failure = parser.get().body()->failure;
    discard_body();
    if (refusal_) return respond_and_close(refusal_->status, std::move(refusal_->message));
    if (sink_failure) return respond_and_close(status_for(sink_failure->kind), sink_failure->message);
    if (ec == http::error::body_limit) {
        return respond_and_close(http::status::payload_too_large,
                                 "the request body is larger than this server's limit of " +
                                     std::to_string(body_limit_) + " bytes");
    }
    auto refused = body_refusal(ec);
    respond_and_close(refused.status, std::move(refused.message));
}

template <class Parser>
void http_session::finish_body(Parser& parser) {
    reading_ = reading::nothing;
    auto message = parser.release();
    request_.body_bytes = message.payload_size().value_or(0);
    if constexpr (std::is_same_v<Parser, http::request_parser<sink_body>>) {
        request_.sink = std::move(message.body());
        sink_parser_.reset();
    } else {
        request_.body = std::move(message.body());
        string_parser_.reset();
    }
    // RFC 9110 §6.5.1: trailer fields are not merged into the header section; Beast merges
    // them, so the handler gets the header section as it came.
    if (chunked_header_) {
        request_.header = std::move(*chunked_header_);
        chunked_header_.reset();
    } else {
        request_.header = std::move(message.base());
    }
    dispatch();
}

void http_session::on_chunk_header(std::uint64_t size, std::string_view extensions, error_code& ec) {
    chunk_extension_bytes_ += extensions.size();
    if (chunk_extension_bytes_ > limits_.chunk_extension_bytes) {
        refusal_.emplace(chunk_extensions_refusal(limits_));
        ec = http::error::bad_chunk_extension;
        return;
    }
    if (size != 0) return;
    // The last chunk: Beast calls this once the whole trailer is in the buffer, before it parses
    // the trailer's fields (where a field of 64 KiB would throw). `extensions` points into the
    // buffer, just before the last chunk's CRLF.
    const std::string_view buffered(static_cast<const char*>(buffer_.data().data()), buffer_.size());
    const auto begin = reinterpret_cast<std::uintptr_t>(buffered.data());
    const auto at = reinterpret_cast<std::uintptr_t>(extensions.data() + extensions.size());
    if (at < begin || at > begin + buffered.size()) return;  // not in our buffer after all: its size bounds it
    const auto line_end = static_cast<std::size_t>(at - begin);
    const auto end = buffered.find("\r\n\r\n", line_end);
    const auto trailer = end == std::string_view::npos ? buffered.size() - line_end : end + 2 - line_end;
    if (header_block_bytes_ + trailer > limits_.header_bytes) {
        refusal_.emplace(trailer_refusal(limits_));
        ec = http::error::header_limit;
    }
}

std::optional<request_refusal> http_session::check_unparsed(bool chunked) const {
    // What the parser leaves in the buffer waiting for more: in a chunked body, a chunk-size line
    // or the last chunk's line and its trailer so far. Neither may grow past its limit while a
    // client trickles it in.
    if (!chunked) return std::nullopt;
    std::string_view rest(static_cast<const char*>(buffer_.data().data()), buffer_.size());
    if (rest.starts_with("\r\n")) rest.remove_prefix(2);  // the end of the last chunk's data
    const auto line_end = rest.find("\r\n");
    if (line_end == std::string_view::npos) {
        if (chunk_extension_bytes_ + rest.size() > limits_.chunk_extension_bytes)
            return chunk_extensions_refusal(limits_);
        return std::nullopt;
    }
    // The parser takes every whole chunk-size line but the last chunk's, which waits for its
    // trailer, and one whose quoted extension never closes (Beast looks for the quote past the
    // line's end, for as long as the client sends).
    if (!is_last_chunk_line(rest.substr(0, line_end))) return body_refusal(http::error::bad_chunk_extension);
    if (header_block_bytes_ + (rest.size() - line_end - 2) > limits_.header_bytes)
        return trailer_refusal(limits_);
    return std::nullopt;
}

void http_session::read_more() {
    const auto room = buffer_.max_size() - buffer_.size();
    // The limits above keep every unparsed element well inside the buffer; never read past it.
    if (room == 0) {
        discard_body();
        auto refused = header_refusal(http::error::header_limit, limits_);
        return respond_and_close(refused.status, std::move(refused.message));
    }
    if (!read_timer_armed_) arm_read_deadline();
    read_pending_ = true;
    // A linger drops what arrives: over TLS, as it came, since close_notify has ended TLS.
    if (tls_ && reading_ != reading::linger) return read_through_tls(buffer_.prepare(room), false);
    stream_.socket().async_read_some(buffer_.prepare(room),
                                     guarded([this](error_code ec, std::size_t bytes) { on_read(ec, bytes); }));
}

void http_session::read_through_tls(net::mutable_buffer into, bool from_wait) {
    const auto step = tls_->read(into.data(), into.size());
    switch (step.what) {
        case tls_channel::outcome::done:
            // At the top of a wait's handler the bytes are taken at once; from inside a read loop
            // they are posted, as a socket's completion is, so a fast client cannot deepen the stack.
            if (from_wait) return on_read({}, step.bytes);
            net::post(stream_.get_executor(), guarded([this, bytes = step.bytes] { on_read({}, bytes); }));
            return;
        case tls_channel::outcome::want_read:
        case tls_channel::outcome::want_write:
            stream_.socket().async_wait(
                step.what == tls_channel::outcome::want_read ? tcp::socket::wait_read : tcp::socket::wait_write,
                guarded([this, into](error_code ec) {
                    if (ec) return on_read(ec, 0);
                    read_through_tls(into, true);
                }));
            return;
        case tls_channel::outcome::closed:
            net::post(stream_.get_executor(), guarded([this] { on_read(net::error::eof, 0); }));
            return;
        case tls_channel::outcome::failed:
            spdlog::debug("{}: TLS read failed: {}", peer_, tls_->reason());
            net::post(stream_.get_executor(), guarded([this] { on_read(net::error::connection_reset, 0); }));
            return;
    }
}

void http_session::on_read(error_code ec, std::size_t bytes) {
    read_pending_ = false;
    buffer_.commit(bytes);
    if (bytes > 0) {
        last_progress_ = clock::now();
        paced_bytes_ += bytes;
        if (activity_ == session_registry::activity::idle) set_activity(session_registry::activity::busy);
    }
    if (ec) return on_read_failed(ec);
    continue_reading();
}

void http_session::continue_reading() {
    switch (reading_) {
        case reading::header: return parse_header();
        case reading::body: return sink_parser_ ? parse_body(*sink_parser_) : parse_body(*string_parser_);
        case reading::linger:
            if (draining_) return do_close();  // a read that completed before give_way's cancel
            buffer_.consume(buffer_.size());
            return read_more();
        case reading::handshake:
        case reading::nothing: return;
    }
}

void http_session::on_read_failed(error_code ec) {
    const bool timed_out = std::exchange(read_timed_out_, false);
    const auto phase = std::exchange(reading_, reading::nothing);
    if (phase == reading::body && timed_out) return answer_slow_body();
    if (phase == reading::body) discard_body();
    // A client that ends its half of the connection inside a header block still hears why.
    if (phase == reading::header && ec == net::error::eof && buffer_.size() > 0) {
        head_request_ = unread_header_is_head();
        auto refused = unfinished_header_refusal();
        return respond_and_close(refused.status, std::move(refused.message));
    }
    if (!timed_out) fail(ec, "read");
    do_close();
}

void http_session::answer_slow_body() {
    discard_body();
    const auto now = clock::now();
    // The silence rule, else the rate rule, decided it (see paced_deadline).
    const auto elapsed = std::chrono::duration_cast<std::chrono::milliseconds>(now - paced_since_);
    const auto refused = now - last_progress_ >= limits_.read_timeout
                             ? stalled_body_refusal(limits_)
                             : slow_body_refusal(limits_, paced_bytes_, elapsed);
    respond_and_close(refused.status, refused.message);
}

http_session::clock::time_point http_session::read_deadline() const {
    switch (reading_) {
        case reading::handshake:
        case reading::header: return phase_deadline_;
        case reading::body: return paced_deadline(limits_.read_timeout);
        case reading::linger: return std::min(phase_deadline_, paced_deadline(limits_.linger_timeout));
        case reading::nothing: break;
    }
    return clock::time_point::max();
}

// A body's (or a linger's) deadline is the earlier of two rules:
// - silence: `grace` after the last bytes arrived;
// - rate: `grace` after the phase began, plus a second for every min_body_rate bytes
//   received (Apache's mod_reqtimeout MinRate works the same way).
// The silence rule alone restarts on every byte, so a trickle of one byte a minute would never
// end; a fixed deadline by size cannot know a chunked body's size and cuts a large upload on a
// slow link. The rate rule ends a trickle at about `grace`, while an upload of any size that
// averages min_body_rate (4 KiB/s by default, a 4 GiB wheel in under 12 days) never meets it.
http_session::clock::time_point http_session::paced_deadline(std::chrono::milliseconds grace) const {
    const auto silence = last_progress_ + grace;
    if (limits_.min_body_rate == 0) return silence;
    const std::chrono::duration<double> earned(static_cast<double>(paced_bytes_) /
                                               static_cast<double>(limits_.min_body_rate));
    const auto rate = paced_since_ + grace + std::chrono::duration_cast<clock::duration>(earned);
    return std::min(silence, rate);
}

void http_session::arm_read_deadline() {
    read_timer_.expires_at(read_deadline());  // cancels the wait for an earlier one
    read_timer_armed_ = true;
    read_timer_.async_wait([weak = weak_from_this()](error_code ec) {
        if (ec) return;  // re-armed, or the session closed
        if (auto self = weak.lock()) self->on_read_deadline();
    });
}

void http_session::on_read_deadline() {
    read_timer_armed_ = false;
    if (!read_pending_ || closed_) return;  // between reads: the next read arms it again
    if (clock::now() < read_deadline()) return arm_read_deadline();  // it moved on meanwhile
    // Cancel the read alone: the socket stays open, so a body can still be answered 408.
    read_timed_out_ = true;
    error_code ignored;
    stream_.socket().cancel(ignored);
}

void http_session::dispatch() {
    request_.peer = peer_address_;
    // Moved into the handler's own parameter, which owns the body's sink from here on; on_header
    // starts the next request afresh.
    handler_.handle(std::move(request_), [self = shared_from_this()](outgoing_response&& response) {
        // Answered on the session's own thread (a cached page): written at once, as net::dispatch
        // would, without wrapping the response into a type-erased function first.
        const auto executor = self->stream_.get_executor();  // target() points into it: keep it alive
        const auto* own = executor.target<net::io_context::executor_type>();
        if (own != nullptr && own->running_in_this_thread()) {
            return self->guarded([session = self.get(), &response] { session->do_write(std::move(response)); })();
        }
        // From a worker thread: the write runs on the session's own.
        net::dispatch(self->stream_.get_executor(),
                      self->guarded([session = self.get(), response = std::move(response)]() mutable {
                          session->do_write(std::move(response));
                      }));
    });
}

void http_session::respond_and_close(http::status status, std::string message) {
    if (log_method_.empty()) log_method_ = "-";
    if (log_target_.empty()) log_target_ = "-";
    close_after_response_ = true;
    do_write(make_text_response_without_request(status, std::move(message), {},
                                                head_request_ ? http::verb::head : http::verb::get));
}

bool http_session::unread_header_is_head() const {
    const auto& parsed = header_parser_->get();
    if (!parsed.method_string().empty()) return parsed.method() == http::verb::head;
    return starts_head_request({static_cast<const char*>(buffer_.data().data()), buffer_.size()});
}

void http_session::do_write(outgoing_response&& response) {
    // A large page over plain HTTP leaves by sendfile(2) from its sealed copy (the TLS path
    // copies into its records either way, so it keeps writing from memory).
    if (auto* page = std::get_if<prepared_response>(&response.shape); page && page->body_file && page->body && !tls_) {
        file_response from_file{std::move(page->head), file_span{std::move(page->body_file), 0, page->body->size()}};
        response.shape = std::move(from_file);
    }
    response_.emplace(std::move(response));
    peer_sent_more_ = false;
    const bool keep_alive = std::visit(overloaded{
                                           [](const http::message_generator& message) { return message.keep_alive(); },
                                           [](const auto& prepared) { return prepared.head.keep_alive; },
                                       },
                                       response_->shape);
    if (!keep_alive || draining_) close_after_response_ = true;
    std::visit(overloaded{
                   [this](const http::message_generator&) { do_write_some(); },
                   [this](const prepared_response& prepared) {
                       do_write_head(prepared.head, prepared.body ? net::buffer(*prepared.body) : net::const_buffer());
                   },
                   [this](const auto& body_follows) { do_write_head(body_follows.head, net::const_buffer()); },
               },
               response_->shape);
}

void http_session::do_write_head(const prepared_head& head, net::const_buffer body) {
    const std::array<net::const_buffer, 2> buffers{net::buffer(head.text), body};
    if (tls_) return write_all(buffers, [this](error_code ec) { on_head_written(ec); });
    // Most pages fit in the socket's send buffer: write now, and wait for the socket (under the
    // write deadline) only for what did not fit. The socket is non-blocking (see the constructor).
    error_code first_try;
    std::size_t written = 0;
    if (std::holds_alternative<file_response>(response_->shape)) {
        // MSG_MORE: the head waits for the file's first bytes and leaves in the same segment.
        const ssize_t sent =
            ::send(stream_.socket().native_handle(), head.text.data(), head.text.size(), MSG_MORE | MSG_NOSIGNAL);
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
    write_all(rest, [this](error_code ec) { on_head_written(ec); });
}

void http_session::on_head_written(error_code ec) {
    if (ec) {
        fail(ec, "write");
        const bool body_follows = !std::holds_alternative<prepared_response>(response_->shape);
        return body_follows ? abort_response() : do_close();
    }
    after_prepared_head();
}

template <class Buffers, class Then>
void http_session::write_all(const Buffers& buffers, Then then) {
    if (!tls_) {
        stream_.expires_after(limits_.write_timeout);
        net::async_write(stream_, buffers, guarded([then = std::move(then)](error_code ec, std::size_t) mutable {
                             then(ec);
                         }));
        return;
    }
    tls_unstaged_.assign(net::buffer_sequence_begin(buffers), net::buffer_sequence_end(buffers));
    tls_unstaged_next_ = 0;
    tls_written_ = std::move(then);
    flush_tls();
}

void http_session::flush_tls() {
    for (;;) {
        if (tls_staged_sent_ == tls_staged_.size()) {
            tls_staged_.clear();
            tls_staged_sent_ = 0;
            while (tls_unstaged_next_ < tls_unstaged_.size() && tls_staged_.size() < tls_stage_bytes) {
                auto& next = tls_unstaged_[tls_unstaged_next_];
                const auto take = std::min(next.size(), tls_stage_bytes - tls_staged_.size());
                tls_staged_.append(static_cast<const char*>(next.data()), take);
                next += take;
                if (next.size() == 0) ++tls_unstaged_next_;
            }
            if (tls_staged_.empty()) return finish_tls_write({});
        }
        if (!write_tls_stage([this](error_code ec) { ec ? finish_tls_write(ec) : flush_tls(); })) return;
    }
}

bool http_session::write_tls_stage(const std::function<void(error_code)>& resume) {
    while (tls_staged_sent_ < tls_staged_.size()) {
        const auto step = tls_->write(tls_staged_.data() + tls_staged_sent_, tls_staged_.size() - tls_staged_sent_);
        switch (step.what) {
            case tls_channel::outcome::done: tls_staged_sent_ += step.bytes; continue;
            case tls_channel::outcome::want_read:
            case tls_channel::outcome::want_write:
                wait_for_socket(
                    step.what == tls_channel::outcome::want_read ? tcp::socket::wait_read : tcp::socket::wait_write,
                    resume);
                return false;
            case tls_channel::outcome::closed:
            case tls_channel::outcome::failed:
                spdlog::debug("{} {} {}: TLS write failed: {}", peer_, log_method_, log_target_, tls_->reason());
                resume(net::error::connection_reset);
                return false;
        }
    }
    return true;
}

void http_session::finish_tls_write(error_code ec) {
    tls_unstaged_.clear();
    tls_staged_.clear();
    tls_staged_sent_ = 0;
    net::post(stream_.get_executor(), guarded([this, ec, then = std::exchange(tls_written_, nullptr)] { then(ec); }));
}

void http_session::wait_for_socket(tcp::socket::wait_type kind, std::function<void(error_code)> next) {
    // The client reads nothing (or sends nothing OpenSSL needs): wait at most the write deadline.
    stream_wait_.expires_after(limits_.write_timeout);
    stream_wait_.async_wait([weak = weak_from_this()](error_code ec) {
        auto self = weak.lock();
        // Re-armed since (the socket was ready in time, and the next wait began): not ours.
        if (ec || !self || self->stream_wait_.expiry() > std::chrono::steady_clock::now()) return;
        spdlog::debug("{} {} {}: the client read nothing for {} s; closing", self->peer_, self->log_method_,
                      self->log_target_,
                      std::chrono::duration_cast<std::chrono::seconds>(self->limits_.write_timeout).count());
        error_code ignored;
        self->stream_.socket().cancel(ignored);
    });
    stream_.socket().async_wait(kind, guarded([this, next = std::move(next)](error_code ec) {
        stream_wait_.cancel();
        next(ec);
    }));
}

void http_session::after_prepared_head() {
    if (std::holds_alternative<streamed_response>(response_->shape)) return do_write_stream();
    if (std::holds_alternative<file_response>(response_->shape))
        return tls_ ? send_file_through_tls() : do_send_file();
    finish_request();
}

void http_session::do_send_file() {
    auto& span = std::get<file_response>(response_->shape).body;
    std::uint64_t turn_left = turn_bytes;
    while (span.length > 0) {
        if (turn_left == 0) {
            net::post(stream_.get_executor(), guarded([this] { do_send_file(); }));
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
        if (sent < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            return wait_for_socket(tcp::socket::wait_write, [this](error_code ec) {
                if (!ec) return do_send_file();
                fail(ec, "write");
                abort_response();
            });
        }
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

// This kernel offers no TLS of its own (kTLS) here, so SSL_sendfile cannot be used: the file is
// read in pieces of tls_stage_bytes, each encrypted and sent before the next is read, so a
// download of any size holds one piece.
void http_session::send_file_through_tls() {
    auto& span = std::get<file_response>(response_->shape).body;
    std::uint64_t turn_left = turn_bytes;
    for (;;) {
        if (tls_staged_sent_ == tls_staged_.size()) {
            if (span.length == 0) {
                std::string().swap(tls_staged_);
                tls_staged_sent_ = 0;
                return finish_request();
            }
            if (turn_left == 0) {
                net::post(stream_.get_executor(), guarded([this] { send_file_through_tls(); }));
                return;
            }
            tls_staged_.resize(static_cast<std::size_t>(std::min<std::uint64_t>(span.length, tls_stage_bytes)));
            const ssize_t got = ::pread(span.file->get(), tls_staged_.data(), tls_staged_.size(),
                                        static_cast<off_t>(span.offset));
            if (got < 0 && errno == EINTR) continue;
            if (got <= 0) {
                if (got == 0) {
                    spdlog::error("{} {} {}: the file ended {} bytes short of its length; closing", peer_,
                                  log_method_, log_target_, span.length);
                } else {
                    fail(error_code(errno, boost::system::system_category()), "pread");
                }
                return abort_response();
            }
            const auto bytes = static_cast<std::uint64_t>(got);
            tls_staged_.resize(static_cast<std::size_t>(bytes));
            tls_staged_sent_ = 0;
            span.offset += bytes;
            span.length -= bytes;
            turn_left -= std::min(turn_left, bytes);
        }
        const bool written = write_tls_stage([this](error_code ec) {
            if (!ec) return send_file_through_tls();
            fail(ec, "write");
            abort_response();
        });
        if (!written) return;
    }
}

void http_session::do_write_stream() {
    auto& source = *std::get<streamed_response>(response_->shape).body;
    const auto piece = source.next();
    switch (piece.what) {
        case body_source::state::ready:
            write_all(net::buffer(piece.bytes.data(), piece.bytes.size()),
                      [this, &source, bytes = piece.bytes.size()](error_code ec) {
                          if (ec) {
                              fail(ec, "write");
                              return abort_response();
                          }
                          source.consume(bytes);
                          do_write_stream();
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
    stream_wait_.async_wait(guarded([this](error_code ec) {
        if (ec == net::error::operation_aborted) {
            error_code ignored;
            stream_.socket().cancel(ignored);  // ends watch_for_hang_up's wait
            return do_write_stream();
        }
        spdlog::warn("{} {} {}: no body bytes for {} s; closing", peer_, log_method_, log_target_,
                     std::chrono::duration_cast<std::chrono::seconds>(limits_.write_timeout).count());
        abort_response();
    }));
    watch_for_hang_up();
    std::get<streamed_response>(response_->shape).body->on_ready([weak = weak_from_this()] {
        if (auto self = weak.lock()) net::post(self->stream_.get_executor(), [self] { self->stream_wait_.cancel(); });
    });
}

void http_session::watch_for_hang_up() {
    // A client that leaves while the body's producer has nothing for it is noticed now, not at
    // the next write, so the producer (a fetch from a silent remote host) stops at once.
    if (peer_sent_more_) return;
    stream_.socket().async_wait(tcp::socket::wait_read, guarded([this](error_code ec) {
        const auto* streamed = response_ ? std::get_if<streamed_response>(&response_->shape) : nullptr;
        if (ec || streamed == nullptr) return;  // the body woke first
        if (tls_) {
            // Over TLS the bytes are records, close_notify among them: read them to know.
            if (!tls_peer_left()) return watch_for_hang_up();
            spdlog::debug("{} {} {}: the client ended TLS during the body", peer_, log_method_, log_target_);
            streamed->body->cancel();
            stream_wait_.cancel();
            return;
        }
        char byte = 0;
        const auto peeked = ::recv(stream_.socket().native_handle(), &byte, 1, MSG_PEEK | MSG_DONTWAIT);
        if (peeked > 0) {
            peer_sent_more_ = true;  // a pipelined request, read after this response
            return;
        }
        if (peeked < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) return;
        spdlog::debug("{} {} {}: the client hung up during the body", peer_, log_method_, log_target_);
        streamed->body->cancel();  // next() now says failed: the stream's wait ends the response
        stream_wait_.cancel();
    }));
}

bool http_session::tls_peer_left() {
    while (buffer_.size() < buffer_.max_size()) {
        const auto room = buffer_.max_size() - buffer_.size();
        const auto step = tls_->read(buffer_.prepare(room).data(), room);
        if (step.what != tls_channel::outcome::done)
            return step.what == tls_channel::outcome::closed || step.what == tls_channel::outcome::failed;
        buffer_.commit(step.bytes);  // a pipelined request, parsed after this response
        peer_sent_more_ = true;
    }
    return false;
}

bool http_session::request_arriving() {
    if (buffer_.size() > 0 || header_block_bytes_ > 0) return true;
    if (tls_ && tls_->has_pending()) return true;
    char byte = 0;
    return ::recv(stream_.socket().native_handle(), &byte, 1, MSG_PEEK | MSG_DONTWAIT) > 0;
}

void http_session::abort_response() {
    // Closing short of Content-Length tells the client the body is incomplete.
    const auto elapsed = std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() -
                                                                             request_started_);
    log_.record(peer_, log_method_, log_target_, log_route_, response_->status, response_->body_bytes, elapsed);
    cancel_streamed_body();
    do_close();
}

void http_session::cancel_streamed_body() noexcept {
    if (!response_) return;
    if (auto* streamed = std::get_if<streamed_response>(&response_->shape)) streamed->body->cancel();
}

void http_session::do_write_some() {
    error_code ec;
    const auto buffers = std::get<http::message_generator>(response_->shape).prepare(ec);
    if (ec) {
        fail(ec, "serialize");
        return do_close();
    }
    write_all(buffers, [this, bytes = net::buffer_size(buffers)](error_code written) { on_write_some(written, bytes); });
}

void http_session::on_write_some(error_code ec, std::size_t bytes) {
    if (ec) {
        fail(ec, "write");
        return do_close();
    }
    auto& message = std::get<http::message_generator>(response_->shape);
    message.consume(bytes);
    if (!message.is_done()) return do_write_some();
    finish_request();
}

void http_session::finish_request() {
    const auto elapsed = std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() -
                                                                             request_started_);
    log_.record(peer_, log_method_, log_target_, log_route_, response_->status, response_->body_bytes, elapsed);
    response_.reset();
    if (tls_staged_.capacity() > tls_stage_bytes / 4) std::string().swap(tls_staged_);
    log_method_.clear();
    log_target_.clear();
    log_route_ = metrics::route::other;
    if (close_after_response_) return linger_and_close();
    do_read_header();
}

void http_session::linger_and_close() {
    // Closing a socket with unread bytes sends a reset, which can destroy the response in the
    // client's buffers before it reads it (RFC 9112 §9.6); twine sends a whole upload before it
    // reads the 401 or 413 that came after the headers. So end our half, and read and drop what
    // the client still sends while it keeps sending (session_limits). Time bounds it, not bytes:
    // a cap in bytes would reset exactly the large uploads this is for, and the time bound caps
    // the bytes at what the client's link carries in linger_time.
    if (tls_) tls_->close_notify();
    error_code ec;
    stream_.socket().shutdown(tcp::socket::shutdown_send, ec);
    if (ec || draining_) return do_close();
    set_activity(session_registry::activity::lingering);
    reading_ = reading::linger;
    paced_since_ = last_progress_ = clock::now();
    paced_bytes_ = 0;
    phase_deadline_ = paced_since_ + limits_.linger_time;
    arm_read_deadline();
    continue_reading();
}

void http_session::do_close() {
    closed_ = true;
    reading_ = reading::nothing;
    read_timer_.cancel();
    stream_wait_.cancel();
    if (tls_) tls_->close_notify();
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
