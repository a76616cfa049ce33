#pragma once
// One HTTP/1.1 connection: reads a request (headers, then a body as the handler plans it),
// hands it to the request_handler, writes the response, and repeats while keep-alive holds.
// Kept alive by its own pending handlers; every step runs on the one I/O thread
// whose context the connection was given, so none needs a strand.

#include <chrono>
#include <memory>
#include <optional>

#include "wheelhouse/transport/access_log.hpp"
#include "wheelhouse/transport/net.hpp"
#include "wheelhouse/transport/request_handler.hpp"
#include "wheelhouse/transport/session_limits.hpp"
#include "wheelhouse/transport/session_registry.hpp"
#include "wheelhouse/transport/sink_body.hpp"

namespace wheelhouse::transport {

class http_session : public std::enable_shared_from_this<http_session> {
public:
    http_session(tcp::socket&& socket, request_handler& handler, const session_limits& limits,
                 session_registry& registry, access_log& log);
    ~http_session();

    // Starts reading. Thread safety: call once, from any thread.
    void run();

    // Closes the connection if it is waiting for a request; otherwise closes it after the
    // response in flight. Thread safety: any thread.
    void drain();

private:
    void do_read_header();
    void on_read_header(error_code ec);
    void start_body(body_plan plan);
    template <class Parser>
    void do_read_body(Parser& parser);
    template <class Parser>
    void on_read_body(Parser& parser, error_code ec);
    void dispatch();
    void respond_and_close(http::status status, std::string message);
    void do_write(outgoing_response response);
    void do_write_some();
    void do_write_prepared();
    void on_write_some(error_code ec, std::size_t bytes);
    void after_prepared_head();
    void do_write_stream();
    void wait_for_stream();
    void do_send_file();
    void wait_to_send_file();
    void abort_response();
    void finish_request();
    void do_close();
    void discard_body() noexcept;
    void fail(error_code ec, const char* what);

    beast::tcp_stream stream_;
    // Holds the session while a streamed body's producer has nothing ready, and bounds that wait;
    // bounds the wait for a full socket while a file is sent.
    net::steady_timer stream_wait_;
    beast::flat_buffer buffer_;
    request_handler& handler_;
    const session_limits& limits_;
    session_registry& registry_;
    access_log& log_;
    std::string peer_;
    net::ip::address peer_address_;

    std::optional<http::request_parser<http::empty_body>> header_parser_;
    std::optional<http::request_parser<http::string_body>> string_parser_;
    std::optional<http::request_parser<sink_body>> sink_parser_;
    incoming_request request_;
    std::optional<outgoing_response> response_;
    std::chrono::steady_clock::time_point request_started_;
    std::uint64_t body_limit_ = 0;
    bool close_after_response_ = false;
    bool waiting_for_request_ = false;
    bool draining_ = false;
    std::string log_method_;
    std::string log_target_;
};

}  // namespace wheelhouse::transport
