#pragma once
// An HTTPS client for the hosts that hold release assets: Beast over OpenSSL with certificate
// and host-name verification, SNI, deadlines, a redirect limit and a body limit. Every URL it
// touches, the first and each redirect's, passes the host policy, and so does every address
// the name resolves to, so the index cannot be turned on internal services.

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "wheelhouse/remote/host_policy.hpp"
#include "wheelhouse/result.hpp"

namespace wheelhouse::remote {

struct client_settings {
    host_policy policy;
    std::string ca_bundle;  // a PEM file; empty: the system's store
    std::chrono::milliseconds connect_timeout{std::chrono::seconds(10)};
    std::chrono::milliseconds read_timeout{std::chrono::seconds(30)};   // between two reads
    // One whole fetch(). fetch_to() has none: a streamed body goes at its reader's pace (a slow
    // proxy client, a multi-GB hash pass), and read_timeout still catches a stall.
    std::chrono::milliseconds total_timeout{std::chrono::minutes(10)};
    unsigned max_redirects = 5;
    std::string user_agent = "wheelhouse";
};

using header_list = std::vector<std::pair<std::string, std::string>>;

// Stops a fetch from another thread: its pending connect or read ends at once (a proxy whose
// client hung up must not keep reading from the remote host until a deadline).
// Thread safety: cancel() and cancelled() from any thread; attach()/detach() by the fetch only.
class fetch_cancellation {
public:
    void cancel();
    bool cancelled() const;

    // The fetch's way to interrupt itself, called (under a lock) by cancel(); false when
    // cancel() came first.
    bool attach(std::function<void()> interrupt);
    void detach();

private:
    mutable std::mutex mutex_;
    bool cancelled_ = false;
    std::function<void()> interrupt_;
};

struct fetch_request {
    std::string url;
    header_list headers;                      // e.g. Range, Accept, Authorization
    std::uint64_t max_body = 16ull << 20;     // a longer body fails as too_large
    bool follow_redirects = true;
    std::shared_ptr<fetch_cancellation> cancellation;  // null: runs to its end or a deadline
};

struct fetch_response {
    unsigned status = 0;
    std::string final_url;         // after redirects
    header_list headers;           // names in lower case
    std::string body;              // empty when streamed to a sink
    std::uint64_t bytes_read = 0;  // body bytes received over every hop, for reports

    // The first value of a header, by lower-case name; empty when absent.
    std::string_view header(std::string_view lower_case_name) const;
};

// Receives a streamed body in order; an error stops the fetch.
using body_chunk_sink = std::function<result<void>(std::span<const char>)>;
// Sees the final response's status, URL and headers (body still empty) before its first body
// chunk; an error stops the fetch. A proxy uses it to answer its own client's headers early.
using head_callback = std::function<result<void>(const fetch_response&)>;

// Thread safety: fetch() and fetch_to() may be called from any number of threads at once;
// each call blocks its thread (run it on a worker or a command line, never an I/O thread).
// Errors: error_kind::invalid for a URL that is malformed or off the policy (or a name that
// resolves to a refused address), error_kind::upstream for a connection, TLS, redirect or
// protocol failure (a body shorter than its Content-Length included, a cancelled fetch), error_kind::timeout past
// a connect, read or (fetch() only) total deadline, error_kind::too_large past max_body. A
// status >= 400 is not an error: the caller decides. Authorization headers go only to the first
// URL's host.
class http_client {
public:
    explicit http_client(client_settings settings);
    ~http_client();
    http_client(const http_client&) = delete;
    http_client& operator=(const http_client&) = delete;

    result<fetch_response> fetch(const fetch_request& request);

    // As fetch(), but the final response's body goes to `sink` chunk by chunk (no max_body, no
    // total deadline), after `on_head` (when set) has seen its headers.
    result<fetch_response> fetch_to(const fetch_request& request, const body_chunk_sink& sink,
                                    const head_callback& on_head = {});

    const client_settings& settings() const noexcept;

    // Shutdown: ends every fetch under way at once and refuses new ones (unavailable), so work
    // left on a worker (a registration reading a stalled host) cannot hold the exit past the
    // drain. Any thread.
    void stop();

private:
    struct impl;
    std::unique_ptr<impl> impl_;
};

}  // namespace wheelhouse::remote
