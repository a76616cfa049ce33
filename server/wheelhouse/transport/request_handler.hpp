#pragma once
// The whole of what the transport knows of the application: it asks how to read a request's
// body, hands over the complete request, and writes whatever response comes back.

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <variant>

#include <boost/beast/http/message_generator.hpp>

#include "wheelhouse/metrics/route.hpp"
#include "wheelhouse/result.hpp"
#include "wheelhouse/storage/descriptor.hpp"
#include "wheelhouse/transport/body_source.hpp"
#include "wheelhouse/transport/net.hpp"

namespace wheelhouse::transport {

// A status line and header fields written as they are, past Beast's serializer, ending in the
// blank line; the three prepared shapes below start with one.
struct prepared_head {
    std::string text;
    bool keep_alive = true;
};

// A response whose bytes are known whole: the head, then a body shared with every other
// response of the same page. The session writes it with one gather write: the fast path of a
// cached page; over plain HTTP a large page with a read-only file copy of its body
// (storage/page_file.hpp) leaves by sendfile(2) instead, one copy fewer.
struct prepared_response {
    prepared_head head;
    std::shared_ptr<const std::string> body;  // null when nothing follows the head (HEAD, 304)
    std::shared_ptr<storage::descriptor> body_file{};  // the body's sealed copy, or null
};

// A head, then a body pulled as another thread produces it (a proxied download).
struct streamed_response {
    prepared_head head;
    std::shared_ptr<body_source> body;
};

// Bytes of an open file that follow a prepared head: the session sends them with sendfile(2),
// from the page cache to the socket without passing through the server's memory.
struct file_span {
    std::shared_ptr<storage::descriptor> file;  // closed when the last response using it is gone
    std::uint64_t offset = 0;
    std::uint64_t length = 0;  // more than 0: a response without body bytes is a prepared_response
};

// A head, then bytes of a file.
struct file_response {
    prepared_head head;
    file_span body;
};

// How a response's bytes leave the session: one of four ways, so no response can mix two.
// http::message_generator is whatever Beast serialises (a message with any body type).
using response_shape = std::variant<http::message_generator, prepared_response, streamed_response, file_response>;

// A visitor of lambdas, one for each alternative: std::visit(overloaded{...}, response.shape).
template <class... Lambdas>
struct overloaded : Lambdas... {
    using Lambdas::operator()...;
};
template <class... Lambdas>
overloaded(Lambdas...) -> overloaded<Lambdas...>;  // clang 14 (the fuzz preset) deduces no aggregates

// A response ready to be written, with what the access log needs to know of it.
struct outgoing_response {
    response_shape shape;
    unsigned status = 0;
    std::uint64_t body_bytes = 0;
};

// Where a streamed body goes as it arrives (an upload's spool file, through a multipart
// parser or straight). Thread safety: used by one session at a time, then by the handler.
class body_sink {
public:
    virtual ~body_sink() = default;
    // The next bytes of the body; an error stops the read and is answered to the client.
    virtual result<void> write(std::span<const char> bytes) = 0;
    // The body ended (Content-Length reached or the last chunk read).
    virtual result<void> finish() = 0;

    // Set by the transport when write() or finish() failed.
    std::optional<error> failure;
};

// How the session reads the body that follows a request's headers.
struct body_plan {
    enum class kind {
        reject,     // answer `rejection` at once and close: the body is not read
        none,       // no body expected; any body up to a small limit is read and ignored
        in_memory,  // read into a string of at most `limit` bytes
        stream,     // hand to `sink` as it arrives, at most `limit` bytes
    };
    kind how = kind::none;
    std::uint64_t limit = 0;
    std::shared_ptr<body_sink> sink;
    std::optional<outgoing_response> rejection;
    // The route the request reached, which /metrics counts it under, whatever the answer.
    metrics::route label = metrics::route::other;
    // What plan_body learned from the headers (the route, the caller's grant), handed back to
    // handle() with the request so nothing is worked out twice. The transport only carries it.
    std::shared_ptr<void> handler_state;
};

// A complete request, as the handler receives it.
struct incoming_request {
    http::request_header<> header;
    std::string body;                  // for body_plan::kind::in_memory
    std::shared_ptr<body_sink> sink;   // for body_plan::kind::stream: it has had the whole body
    std::uint64_t body_bytes = 0;
    std::shared_ptr<void> handler_state;  // body_plan::handler_state of this request's plan
    net::ip::address peer;
    std::chrono::steady_clock::time_point received_at;
};

// Delivers the response to the session that asked. Callable from any thread, exactly once.
// Taken by reference: a response is moved once, into the session, not at every layer it passes.
using responder = std::function<void(outgoing_response&&)>;

class request_handler {
public:
    virtual ~request_handler() = default;

    // Thread safety: called on the session's I/O thread; must not block.
    virtual body_plan plan_body(const http::request_header<>& header) = 0;

    // Thread safety: called on the session's I/O thread. Quick work answers
    // inline; slow work (ingest, database writes) is queued and answers later from a worker.
    virtual void handle(incoming_request request, responder respond) = 0;
};

}  // namespace wheelhouse::transport
