#include "wheelhouse/remote/http_client.hpp"

#include <algorithm>
#include <array>
#include <exception>
#include <mutex>
#include <optional>
#include <unordered_set>

#include <boost/asio/ssl.hpp>
#include <boost/beast/ssl.hpp>
#include <boost/url/parse.hpp>
#include <boost/url/url.hpp>
#include <openssl/ssl.h>

#include "wheelhouse/remote/tls_context.hpp"
#include "wheelhouse/text/ascii.hpp"
#include "wheelhouse/transport/net.hpp"

namespace wheelhouse::remote {
namespace {

namespace ssl = boost::asio::ssl;
using clock = std::chrono::steady_clock;

constexpr std::size_t chunk_bytes = 256 * 1024;
constexpr std::chrono::milliseconds rearm_interval{100};
constexpr std::uint32_t header_limit = 64 * 1024;

using text::to_lower;

std::string seconds_text(std::chrono::milliseconds duration) {
    const auto ms = duration.count();
    if (ms % 1000 == 0) return std::to_string(ms / 1000) + "s";
    return std::to_string(ms) + "ms";
}

// One URL taken apart into what a connection and its request need.
struct target {
    std::string url;
    bool tls = true;
    std::string host;         // for DNS, SNI and certificate checks: no brackets, lower case
    bool host_is_ip = false;  // no SNI for an IP literal
    std::string port;
    std::string host_header;  // as the URL wrote it, with brackets and port
    std::string path_and_query;
};

result<target> parse_target(const std::string& url, const host_policy& policy) {
    if (auto allowed = policy.check_url(url); !allowed) return allowed.error();
    const auto view = boost::urls::parse_uri(url);  // check_url has parsed it already
    if (!view) return invalid("'" + url + "' is not a valid URL");
    target out;
    out.url = url;
    out.tls = to_lower(view->scheme()) == "https";
    out.host = to_lower(view->host_address());
    if (!out.host.empty() && out.host.back() == '.') out.host.pop_back();
    out.host_is_ip = view->host_type() == boost::urls::host_type::ipv4 ||
                     view->host_type() == boost::urls::host_type::ipv6;
    out.port = view->has_port() && !view->port().empty() ? std::string(view->port()) : (out.tls ? "443" : "80");
    out.host_header = std::string(view->encoded_host_and_port());
    out.path_and_query = view->encoded_path().empty() ? "/" : std::string(view->encoded_path());
    if (view->has_query()) out.path_and_query += "?" + std::string(view->encoded_query());
    return out;
}

result<std::string> resolve_location(const std::string& base_url, std::string_view location) {
    const auto base = boost::urls::parse_uri(base_url);
    const auto reference = boost::urls::parse_uri_reference(location);
    if (!base || !reference) return make_error(error_kind::upstream, "redirect to a malformed Location '" + std::string(location) + "'");
    boost::urls::url resolved;
    if (auto done = boost::urls::resolve(*base, *reference, resolved); !done)
        return make_error(error_kind::upstream, "redirect Location '" + std::string(location) + "' cannot be resolved against " + base_url);
    resolved.remove_fragment();
    return std::string(resolved.buffer());
}

bool is_redirect(unsigned status) {
    return status == 301 || status == 302 || status == 303 || status == 307 || status == 308;
}

struct op_result {
    error_code ec;
    std::size_t bytes = 0;
};

// The completion handler of one asynchronous operation run to its end on a private io_context:
// the client is blocking, and asynchronous operations are what give Beast its deadlines.
struct completion {
    op_result* out;
    void operator()(error_code ec) const { out->ec = ec; }
    void operator()(error_code ec, std::size_t bytes) const {
        out->ec = ec;
        out->bytes = bytes;
    }
    void operator()(error_code ec, const tcp::endpoint&) const { out->ec = ec; }
};

// One fetch, redirects and all; lives on the calling thread's stack.
class fetch_run {
public:
    fetch_run(const client_settings& settings, ssl::context& tls, const fetch_request& request,
              const body_chunk_sink* sink, const head_callback* on_head, fetch_cancellation& shutdown)
        : settings_(settings), tls_(tls), request_(request), sink_(sink), on_head_(on_head), shutdown_(shutdown),
          deadline_(sink ? clock::time_point::max() : clock::now() + settings.total_timeout), chunk_(chunk_bytes) {}

    ~fetch_run() {
        if (request_.cancellation) request_.cancellation->detach();
        shutdown_.detach();
    }
    fetch_run(const fetch_run&) = delete;
    fetch_run& operator=(const fetch_run&) = delete;

    result<fetch_response> run() {
        // A cancel closes the open connection from this fetch's own thread: the pending read or
        // connect ends at once.
        const auto interrupt = [this] { net::post(io_, [this] { if (socket_) socket_->close(); }); };
        if (request_.cancellation && !request_.cancellation->attach(interrupt)) return cancelled();
        if (!shutdown_.attach(interrupt)) return cancelled();
        for (const auto& [name, value] : request_.headers) {
            if (name.find_first_of("\r\n:") != std::string::npos || value.find_first_of("\r\n") != std::string::npos)
                return invalid("request header '" + name + "' has a line break or colon where it may not");
        }
        std::string url = request_.url;
        std::vector<std::string> visited;
        for (unsigned redirects = 0;; ++redirects) {
            auto parsed = parse_target(url, settings_.policy);
            if (!parsed) return parsed.error();
            if (visited.empty()) first_host_ = parsed->host;
            response_.final_url = url;
            auto hop = parsed->tls ? over_tls(*parsed) : over_plain(*parsed);
            if (!hop) return hop.error();
            if (!*hop) return std::move(response_);
            auto next = resolve_location(url, **hop);
            if (!next) return next.error();
            visited.push_back(url);
            if (std::find(visited.begin(), visited.end(), *next) != visited.end())
                return make_error(error_kind::upstream, "redirect loop: " + url + " redirects back to " + *next);
            if (redirects + 1 > settings_.max_redirects) {
                return make_error(error_kind::upstream, "more than " + std::to_string(settings_.max_redirects) +
                                                            " redirects starting at " + request_.url);
            }
            url = std::move(*next);
        }
    }

private:
    template <class Start>
    op_result wait(Start&& start) {
        op_result out;
        std::forward<Start>(start)(completion{&out});
        io_.restart();
        io_.run();
        return out;
    }

    clock::time_point deadline_after(std::chrono::milliseconds step) const {
        return std::min(clock::now() + step, deadline_);
    }

    bool is_cancelled() const {
        return (request_.cancellation && request_.cancellation->cancelled()) || shutdown_.cancelled();
    }

    error cancelled() const {
        if (shutdown_.cancelled()) {
            return make_error(error_kind::unavailable,
                              "the server is shutting down; the fetch of " + request_.url + " was stopped: try again");
        }
        return make_error(error_kind::upstream, "the fetch of " + request_.url + " was cancelled: its reader went away");
    }

    error failure(const target& t, std::string_view doing, const error_code& ec,
                  std::chrono::milliseconds step_limit, std::string_view step_setting) const {
        if (is_cancelled()) return cancelled();
        if (ec == beast::error::timeout || ec == net::error::operation_aborted) {
            if (clock::now() >= deadline_) {
                return make_error(error_kind::timeout, "gave up on " + request_.url + " after its total deadline of " +
                                                           seconds_text(settings_.total_timeout) + " while " +
                                                           std::string(doing) + " " + t.host);
            }
            return make_error(error_kind::timeout, "timed out after " + seconds_text(step_limit) + " " +
                                                       std::string(doing) + " " + t.host + " (" +
                                                       std::string(step_setting) + ")");
        }
        return make_error(error_kind::upstream, std::string(doing) + " " + t.host + ":" + t.port + " failed: " + ec.message());
    }

    result<tcp::resolver::results_type> resolve(const target& t) {
        tcp::resolver resolver(io_);
        net::steady_timer timer(io_);
        timer.expires_at(deadline_after(settings_.connect_timeout));
        error_code resolve_ec;
        tcp::resolver::results_type results;
        resolver.async_resolve(t.host, t.port, [&](error_code ec, tcp::resolver::results_type found) {
            resolve_ec = ec;
            results = std::move(found);
            timer.cancel();
        });
        timer.async_wait([&](error_code ec) {
            if (!ec) resolver.cancel();
        });
        io_.restart();
        io_.run();
        if (resolve_ec) return failure(t, "resolving", resolve_ec, settings_.connect_timeout, "remote-connect-timeout");
        if (results.empty()) return make_error(error_kind::upstream, "host " + t.host + " has no address");
        // Every address, not only the first: a name that also points inward is refused whole.
        for (const auto& entry : results) {
            const auto address = entry.endpoint().address().to_string();
            if (auto allowed = settings_.policy.check_address(address); !allowed)
                return invalid("refusing to connect to " + t.host + ": " + allowed.error().message);
        }
        return results;
    }

    result<void> connect(beast::tcp_stream& stream, const target& t) {
        auto endpoints = resolve(t);
        if (!endpoints) return endpoints.error();
        if (is_cancelled()) return cancelled();
        socket_ = &stream;  // until the hop ends (see socket_scope)
        stream.expires_at(deadline_after(settings_.connect_timeout));
        const auto done = wait([&](auto handler) { stream.async_connect(*endpoints, handler); });
        if (done.ec) return failure(t, "connecting to", done.ec, settings_.connect_timeout, "remote-connect-timeout");
        return {};
    }

    // Forgets the hop's connection when it closes, so a late cancel finds none to close.
    struct socket_scope {
        beast::tcp_stream*& socket;
        ~socket_scope() { socket = nullptr; }
    };

    result<std::optional<std::string>> over_plain(const target& t) {
        beast::tcp_stream stream(io_);
        const socket_scope scope{socket_};
        if (auto connected = connect(stream, t); !connected) return connected.error();
        return exchange(stream, t);
    }

    result<std::optional<std::string>> over_tls(const target& t) {
        beast::ssl_stream<beast::tcp_stream> stream(io_, tls_);
        const socket_scope scope{socket_};
        if (!t.host_is_ip && SSL_set_tlsext_host_name(stream.native_handle(), t.host.c_str()) != 1)
            return make_error(error_kind::internal, "could not set the TLS server name " + t.host);
        stream.set_verify_callback(ssl::host_name_verification(t.host));
        if (auto connected = connect(beast::get_lowest_layer(stream), t); !connected) return connected.error();
        beast::get_lowest_layer(stream).expires_at(deadline_after(settings_.connect_timeout));
        const auto shaken = wait([&](auto handler) { stream.async_handshake(ssl::stream_base::client, handler); });
        if (shaken.ec) {
            if (shaken.ec == beast::error::timeout)
                return failure(t, "negotiating TLS with", shaken.ec, settings_.connect_timeout, "remote-connect-timeout");
            return make_error(error_kind::upstream,
                              "TLS with " + t.host + ":" + t.port + " failed: " + shaken.ec.message() +
                                  (settings_.ca_bundle.empty() ? " (a host with a private CA needs ca-bundle)"
                                                               : " (trusted CAs: " + settings_.ca_bundle + ")"));
        }
        return exchange(stream, t);
    }

    // Sends the request and reads the answer: a redirect's Location to follow, or nothing when
    // this was the final response and its body has been delivered.
    template <class Stream>
    result<std::optional<std::string>> exchange(Stream& stream, const target& t) {
        auto& socket = beast::get_lowest_layer(stream);
        http::request<http::empty_body> request{http::verb::get, t.path_and_query, 11};
        request.set(http::field::host, t.host_header);
        request.set(http::field::user_agent, settings_.user_agent);
        request.set(http::field::connection, "close");
        for (const auto& [name, value] : request_.headers) {
            // Credentials for the API host never travel to the storage host it redirects to.
            if (beast::iequals(name, "authorization") && t.host != first_host_) continue;
            request.set(name, value);
        }
        socket.expires_at(deadline_after(settings_.read_timeout));
        const auto sent = wait([&](auto handler) { http::async_write(stream, request, handler); });
        if (sent.ec) return failure(t, "sending the request to", sent.ec, settings_.read_timeout, "remote-read-timeout");

        beast::flat_buffer buffer;
        buffer.reserve(chunk_bytes);  // reads of up to a chunk, not 512 bytes at first
        http::response_parser<http::buffer_body> parser;
        parser.header_limit(header_limit);
        parser.body_limit(boost::none);  // limits are ours: max_body, or none for a sink
        socket.expires_at(deadline_after(settings_.read_timeout));
        const auto head = wait([&](auto handler) { http::async_read_header(stream, buffer, parser, handler); });
        if (head.ec) return failure(t, "waiting for the answer of", head.ec, settings_.read_timeout, "remote-read-timeout");

        const auto& message = parser.get();
        const unsigned status = message.result_int();
        if (request_.follow_redirects && is_redirect(status)) {
            const auto location = field_value(message, http::field::location);
            if (location.empty())
                return make_error(error_kind::upstream, t.url + " answered " + std::to_string(status) + " without a Location");
            return std::optional<std::string>(std::string(location));
        }
        response_.status = status;
        response_.headers.clear();
        for (const auto& field : message) response_.headers.emplace_back(to_lower(field.name_string()), std::string(field.value()));
        const auto declared = parser.content_length();
        if (!sink_ && declared && *declared > request_.max_body) return too_large(t, *declared);
        if (on_head_ && *on_head_) {
            if (auto accepted = (*on_head_)(response_); !accepted) return accepted.error();
        }
        // A streamed body of known length is read past the parser, straight into the chunk.
        const bool counted = sink_ && declared && !parser.chunked() && !parser.is_done();
        if (auto read = counted ? read_counted_body(stream, buffer, *declared, t) : read_body(stream, buffer, parser, t);
            !read) {
            return read.error();
        }
        return std::optional<std::string>{};
    }

    // The read deadline, re-armed at most every 100 ms, not once a read (each arming is a timer
    // update): a stall is still caught, between read_timeout less 100 ms and read_timeout.
    template <class Stream>
    void rearm_read_deadline(Stream& stream, std::optional<clock::time_point>& armed_at) {
        if (const auto now = clock::now(); !armed_at || now - *armed_at >= rearm_interval) {
            beast::get_lowest_layer(stream).expires_at(deadline_after(settings_.read_timeout));
            armed_at = now;
        }
    }

    error closed_early(const target& t, std::uint64_t received, std::optional<std::uint64_t> declared) const {
        return make_error(error_kind::upstream,
                          t.host + " closed the connection after " + std::to_string(received) +
                              (declared ? " of the " + std::to_string(*declared) + " bytes its Content-Length promised"
                                        : " bytes, before the body was complete") +
                              " (" + t.url + ")");
    }

    static bool is_early_close(const error_code& ec) {
        return ec == http::error::partial_message || ec == ssl::error::stream_truncated || ec == net::error::eof ||
               ec == net::error::connection_reset;
    }

    // A body of `length` bytes for the sink: what came with the head first, then reads from TLS
    // straight into the chunk, one copy fewer a byte than through Beast's parser.
    template <class Stream>
    result<void> read_counted_body(Stream& stream, beast::flat_buffer& buffer, std::uint64_t length, const target& t) {
        std::uint64_t received = std::min<std::uint64_t>(buffer.size(), length);
        if (received > 0) {
            response_.bytes_read += received;
            const auto early = buffer.data();
            const std::span<const char> piece(static_cast<const char*>(early.data()), static_cast<std::size_t>(received));
            if (auto taken = (*sink_)(piece); !taken) return taken.error();
        }
        std::optional<result<void>> outcome;
        std::optional<clock::time_point> armed_at;
        std::function<void()> read_next = [&] {
            if (received == length) {
                outcome.emplace();
                return;
            }
            if (is_cancelled()) {
                outcome.emplace(cancelled());
                return;
            }
            rearm_read_deadline(stream, armed_at);
            const auto want = static_cast<std::size_t>(std::min<std::uint64_t>(chunk_.size(), length - received));
            stream.async_read_some(net::buffer(chunk_.data(), want), [&](error_code ec, std::size_t got) {
                received += got;
                response_.bytes_read += got;
                if (got > 0) {
                    if (auto taken = (*sink_)(std::span<const char>(chunk_.data(), got)); !taken) {
                        outcome.emplace(taken.error());
                        return;
                    }
                }
                if (ec && received < length) {
                    outcome.emplace(is_early_close(ec) ? closed_early(t, received, length)
                                                       : failure(t, "reading the body from", ec, settings_.read_timeout,
                                                                 "remote-read-timeout"));
                    return;
                }
                read_next();
            });
        };
        return run_read_loop(read_next, outcome, t);
    }

    // Starts a read loop and runs the context until the loop has set `outcome`.
    result<void> run_read_loop(const std::function<void()>& read_next, std::optional<result<void>>& outcome,
                               const target& t) {
        read_next();
        io_.restart();
        io_.run();
        if (!outcome) return make_error(error_kind::internal, "the body read of " + t.url + " stopped unfinished");
        return std::move(*outcome);
    }

    // The body arrives in one asynchronous read loop that a single io_context::run carries to its
    // end: restarting the context for every read cost more than the reads themselves.
    template <class Stream>
    result<void> read_body(Stream& stream, beast::flat_buffer& buffer, http::response_parser<http::buffer_body>& parser,
                           const target& t) {
        std::optional<result<void>> outcome;
        std::uint64_t received = 0;
        std::optional<clock::time_point> armed_at;
        std::function<void()> read_next = [&] {
            if (parser.is_done()) {
                outcome.emplace();
                return;
            }
            if (is_cancelled()) {
                outcome.emplace(cancelled());
                return;
            }
            auto& body = parser.get().body();
            body.data = chunk_.data();
            body.size = chunk_.size();
            rearm_read_deadline(stream, armed_at);
            http::async_read_some(stream, buffer, parser, [&](error_code ec, std::size_t) {
                if (auto done = take_body_bytes(ec, parser, t, received); done) {
                    outcome.emplace(std::move(*done));
                    return;
                }
                read_next();
            });
        };
        return run_read_loop(read_next, outcome, t);
    }

    // Hands one read's bytes to the sink (or the collected body). A value ends the read loop.
    std::optional<result<void>> take_body_bytes(error_code ec, http::response_parser<http::buffer_body>& parser,
                                                const target& t, std::uint64_t& received) {
        if (ec == http::error::need_buffer) ec = {};
        const std::size_t filled = chunk_.size() - parser.get().body().size;
        if (ec == ssl::error::stream_truncated && parser.need_eof()) {
            // A body that ends at the close: the peer closed without TLS's goodbye.
            error_code eof_ec;
            parser.put_eof(eof_ec);
            ec = eof_ec;
        }
        if (ec) {
            if (is_early_close(ec)) {
                const auto declared = parser.content_length();
                return closed_early(t, received + filled,
                                    declared ? std::optional<std::uint64_t>(*declared) : std::nullopt);
            }
            return failure(t, "reading the body from", ec, settings_.read_timeout, "remote-read-timeout");
        }
        if (filled == 0) return std::nullopt;
        received += filled;
        response_.bytes_read += filled;
        const std::span<const char> piece(chunk_.data(), filled);
        if (sink_) {
            if (auto taken = (*sink_)(piece); !taken) return taken.error();
        } else {
            if (response_.body.size() + filled > request_.max_body) return too_large(t, response_.body.size() + filled);
            response_.body.append(piece.data(), piece.size());
        }
        return std::nullopt;
    }

    error too_large(const target& t, std::uint64_t size) const {
        return make_error(error_kind::too_large, t.url + " answers with " + std::to_string(size) +
                                                     " bytes or more, past the limit of " +
                                                     std::to_string(request_.max_body) + " bytes for this request");
    }

    const client_settings& settings_;
    ssl::context& tls_;
    const fetch_request& request_;
    const body_chunk_sink* sink_;    // null: the body is collected into response_.body
    const head_callback* on_head_;  // null or empty: no one to tell
    fetch_cancellation& shutdown_;  // the client's stop() ends the fetch too
    const clock::time_point deadline_;  // max() for a streamed body: it has no total deadline
    net::io_context io_{1};
    beast::tcp_stream* socket_ = nullptr;  // the hop's connection, for a cancel to close
    std::vector<char> chunk_;
    std::string first_host_;
    fetch_response response_;
};

}  // namespace

std::string_view fetch_response::header(std::string_view lower_case_name) const {
    for (const auto& [name, value] : headers) {
        if (name == lower_case_name) return value;
    }
    return {};
}

void fetch_cancellation::cancel() {
    std::lock_guard lock(mutex_);
    cancelled_ = true;
    if (interrupt_) std::exchange(interrupt_, nullptr)();
}

bool fetch_cancellation::cancelled() const {
    std::lock_guard lock(mutex_);
    return cancelled_;
}

bool fetch_cancellation::attach(std::function<void()> interrupt) {
    std::lock_guard lock(mutex_);
    if (cancelled_) return false;
    interrupt_ = std::move(interrupt);
    return true;
}

void fetch_cancellation::detach() {
    std::lock_guard lock(mutex_);
    interrupt_ = nullptr;
}

struct http_client::impl {
    client_settings settings;
    std::unique_ptr<ssl::context> tls;  // null when it could not be made; then `tls_problem` says why
    std::optional<error> tls_problem;
    std::mutex mutex;  // guards the two below
    bool stopping = false;
    std::unordered_set<std::shared_ptr<fetch_cancellation>> running;  // one per fetch under way

    // Runs one fetch, registered so that stop() can end it.
    result<fetch_response> run(const fetch_request& request, const body_chunk_sink* sink, const head_callback* on_head) {
        if (!tls) return *tls_problem;
        auto shutdown = std::make_shared<fetch_cancellation>();
        {
            std::lock_guard lock(mutex);
            if (stopping) shutdown->cancel();
            running.insert(shutdown);
        }
        result<fetch_response> out = make_error(error_kind::internal, "unreached");
        try {
            out = fetch_run(settings, *tls, request, sink, on_head, *shutdown).run();
        } catch (const std::exception& failure) {
            out = make_error(error_kind::upstream, "fetching " + request.url + " failed: " + failure.what());
        }
        std::lock_guard lock(mutex);
        running.erase(shutdown);
        return out;
    }
};

http_client::http_client(client_settings settings) : impl_(std::make_unique<impl>()) {
    impl_->settings = std::move(settings);
    auto tls = make_tls_client_context(impl_->settings.ca_bundle);
    if (tls) impl_->tls = std::move(*tls);
    else impl_->tls_problem = tls.error();
}

http_client::~http_client() = default;

const client_settings& http_client::settings() const noexcept { return impl_->settings; }

result<fetch_response> http_client::fetch(const fetch_request& request) { return impl_->run(request, nullptr, nullptr); }

result<fetch_response> http_client::fetch_to(const fetch_request& request, const body_chunk_sink& sink,
                                             const head_callback& on_head) {
    return impl_->run(request, &sink, &on_head);
}

void http_client::stop() {
    std::lock_guard lock(impl_->mutex);
    impl_->stopping = true;
    for (const auto& fetch : impl_->running) fetch->cancel();
}

}  // namespace wheelhouse::remote
