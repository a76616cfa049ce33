#pragma once
// One HTTP/1.1 connection: reads a request (headers, then a body as the handler plans it),
// hands it to the request_handler, writes the response, and repeats while keep-alive holds.
// Kept alive by its own pending handlers; every step runs on the one I/O thread
// whose context the connection was given, so none needs a strand. Whatever a step throws ends
// this connection alone (guarded, contain).

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "wheelhouse/transport/access_log.hpp"
#include "wheelhouse/transport/net.hpp"
#include "wheelhouse/transport/request_handler.hpp"
#include "wheelhouse/transport/request_refusals.hpp"
#include "wheelhouse/transport/session_limits.hpp"
#include "wheelhouse/transport/session_registry.hpp"
#include "wheelhouse/transport/sink_body.hpp"
#include "wheelhouse/transport/tls_channel.hpp"

namespace wheelhouse::transport {

class http_session : public std::enable_shared_from_this<http_session> {
public:
    // `tls`: the connection's TLS, whose handshake comes first; null for plain HTTP.
    http_session(tcp::socket&& socket, std::unique_ptr<tls_channel> tls, request_handler& handler,
                 const session_limits& limits, session_registry& registry, access_log& log);
    ~http_session();

    // Starts reading. Thread safety: call once, from any thread.
    void run();

    // Closes the connection if it is waiting for a request; otherwise closes it after the
    // response in flight. Thread safety: any thread.
    void drain();
    // The same for a new connection past the cap (session_registry::make_room), except that a
    // request already arriving is answered first. Thread safety: any thread.
    void give_way();

private:
    using clock = std::chrono::steady_clock;
    // What the socket is being read for; the read deadline follows from it.
    enum class reading { nothing, handshake, header, body, linger };

    // TLS: the handshake, under its own deadline; idle (it may give way at the cap) until its
    // first bytes arrive, as a kept-alive connection is until its next request's.
    void start_handshake();
    void continue_handshake();
    bool plain_http_arrived();
    void answer_plain_http();

    // Reading: one read loop feeds whichever parser the request is at.
    void do_read_header();
    void parse_header();
    void on_header(error_code ec);
    void start_body(body_plan plan);
    void begin_body();
    template <class Parser>
    void parse_body(Parser& parser);
    template <class Parser>
    void refuse_body(Parser& parser, error_code ec);
    template <class Parser>
    void finish_body(Parser& parser);
    void on_chunk_header(std::uint64_t size, std::string_view extensions, error_code& ec);
    std::optional<request_refusal> check_unparsed(bool chunked) const;
    void read_more();
    void read_through_tls(net::mutable_buffer into, bool from_wait);
    void on_read(error_code ec, std::size_t bytes);
    void continue_reading();
    void on_read_failed(error_code ec);
    void answer_slow_body();
    // The read deadline: one timer, armed when a phase starts, re-armed lazily as it moves.
    clock::time_point read_deadline() const;
    clock::time_point paced_deadline(std::chrono::milliseconds grace) const;
    void arm_read_deadline();
    void on_read_deadline();

    void dispatch();
    void respond_and_close(http::status status, std::string message);
    void do_write(outgoing_response&& response);
    void do_write_some();
    // A prepared head, and `body` after it in the same write (a prepared_response's).
    void do_write_head(const prepared_head& head, net::const_buffer body);
    void on_head_written(error_code ec);
    // Writes `buffers` whole within the write deadline, then calls `then(ec)`, never inline.
    template <class Buffers, class Then>
    void write_all(const Buffers& buffers, Then then);
    void flush_tls();
    void finish_tls_write(error_code ec);
    // Writes tls_staged_ from tls_staged_sent_ on through TLS: true once all of it is written;
    // false when it waits for the socket (`resume` then runs) or the write failed (`resume` has
    // run with the error). The one TLS write step of write_all and file downloads.
    bool write_tls_stage(const std::function<void(error_code)>& resume);
    // Waits until the socket is ready for `kind`, at most the write deadline.
    void wait_for_socket(tcp::socket::wait_type kind, std::function<void(error_code)> next);
    void on_write_some(error_code ec, std::size_t bytes);
    void after_prepared_head();
    void do_write_stream();
    void wait_for_stream();
    void watch_for_hang_up();
    // Reads what TLS records came during a response: true when the client ended TLS or left.
    bool tls_peer_left();
    // Whether a request has begun to arrive, read or not (give_way asks before closing).
    bool request_arriving();
    void do_send_file();
    void send_file_through_tls();
    void abort_response();
    void cancel_streamed_body() noexcept;
    void finish_request();
    void linger_and_close();
    void do_close();
    void discard_body() noexcept;
    void fail(error_code ec, const char* what);
    void set_activity(session_registry::activity now);
    // Whether a request whose header block could not be read whole is a HEAD, as far as the
    // parser or, before it parsed the request line, the buffered bytes tell.
    bool unread_header_is_head() const;

    // A completion handler that keeps the session alive, skips `step` once the connection is
    // closed, and contains what `step` throws.
    template <class Step>
    auto guarded(Step step);
    void contain(const char* what) noexcept;

    beast::tcp_stream stream_;
    std::unique_ptr<tls_channel> tls_;
    // Over TLS, a write's buffers not yet staged, and the staged bytes: a write retried after
    // EAGAIN must offer OpenSSL the same bytes, and small buffers staged together leave in one
    // record. Released after each response, so idle connections hold none.
    std::vector<net::const_buffer> tls_unstaged_;
    std::size_t tls_unstaged_next_ = 0;
    std::string tls_staged_;
    std::size_t tls_staged_sent_ = 0;
    std::function<void(error_code)> tls_written_;
    // Holds the session while a streamed body's producer has nothing ready, and bounds that wait;
    // bounds the wait for a full socket while a file is sent.
    net::steady_timer stream_wait_;
    // Cancels a read past its deadline, leaving the socket open for a 408.
    net::steady_timer read_timer_;
    beast::flat_buffer buffer_;
    request_handler& handler_;
    const session_limits& limits_;
    session_registry& registry_;
    access_log& log_;
    std::string peer_;
    net::ip::address peer_address_;
    std::optional<session_registry::handle> registration_;
    session_registry::activity activity_ = session_registry::activity::busy;

    std::optional<http::request_parser<http::empty_body>> header_parser_;
    std::optional<http::request_parser<http::string_body>> string_parser_;
    std::optional<http::request_parser<sink_body>> sink_parser_;
    std::function<void(std::uint64_t, std::string_view, error_code&)> chunk_header_check_;
    // A chunked request's header section as it came, so its trailer cannot add to it.
    std::optional<http::request_header<>> chunked_header_;
    incoming_request request_;
    std::optional<outgoing_response> response_;
    std::optional<request_refusal> refusal_;  // set by on_chunk_header when it stops the parser

    reading reading_ = reading::nothing;
    bool read_pending_ = false;
    bool read_timed_out_ = false;
    bool read_timer_armed_ = false;
    clock::time_point phase_deadline_;  // the header's, or the linger's in all
    // For the body's and the linger's deadline (paced_deadline): when the phase began, when its
    // last bytes arrived, and how many it has read.
    clock::time_point paced_since_;
    clock::time_point last_progress_;
    std::uint64_t paced_bytes_ = 0;
    std::size_t header_block_bytes_ = 0;
    std::size_t chunk_extension_bytes_ = 0;

    clock::time_point request_started_;
    std::uint64_t body_limit_ = 0;
    bool close_after_response_ = false;
    bool head_request_ = false;  // the request being answered is a HEAD
    bool waiting_for_request_ = false;
    bool first_request_after_handshake_ = false;  // keeps the handshake's deadline and stays busy
    bool draining_ = false;
    bool closed_ = false;
    bool peer_sent_more_ = false;  // readable during this response: no longer a sign of a hang-up
    bool contained_ = false;
    std::string log_method_;
    std::string log_target_;
    metrics::route log_route_ = metrics::route::other;  // the plan's label; other until plan_body
};

}  // namespace wheelhouse::transport
