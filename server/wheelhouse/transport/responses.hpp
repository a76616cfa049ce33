#pragma once
// Building outgoing responses: the few shapes every handler (and the session itself) uses.

#include <span>
#include <memory>
#include <string>
#include <string_view>
#include <utility>

#include "wheelhouse/transport/request_handler.hpp"
#include "wheelhouse/transport/shared_string_body.hpp"

namespace wheelhouse::transport {

// What every response names as its Server.
inline constexpr std::string_view server_name = "wheelhouse";

// The one mapping of domain errors to HTTP status, used wherever a result meets HTTP.
http::status status_for(error_kind kind) noexcept;

// HTTP/1.1 keeps the connection unless the client said "close"; HTTP/1.0 only if it asked.
bool wants_keep_alive(const http::request_header<>& request);

// Wraps a finished Beast response, noting its status and payload size for the access log.
template <class Body>
outgoing_response finish(http::response<Body>&& response) {
    response.prepare_payload();
    const unsigned status = response.result_int();
    const std::uint64_t bytes = response.payload_size().value_or(0);
    return outgoing_response{http::message_generator(std::move(response)), status, bytes};
}

// A response whose body is `body` (shared, not copied); for HEAD, the same headers and no body.
outgoing_response make_shared_response(const http::request_header<>& request, http::status status,
                                       std::string_view content_type, std::shared_ptr<const std::string> body,
                                       http::fields extra = {});

// A prepared response (see prepared_response): the same bytes Beast writes for a response to
// `request` with Server, then `fields` in order, then Connection as keep-alive needs, then
// Content-Length when `content_length` is given. `body` is left out for HEAD.
using header_field = std::pair<http::field, std::string_view>;
outgoing_response make_prepared_response(const http::request_header<>& request, http::status status,
                                         std::span<const header_field> fields,
                                         std::shared_ptr<const std::string> body,
                                         std::shared_ptr<storage::descriptor> body_file = nullptr);

// Responses with `head`'s status and fields (Content-Length set here to the body's length),
// written past Beast's serializer. The body is:
// - `body`, shared, not copied;
outgoing_response make_prepared_response(http::response<http::empty_body> head,
                                         std::shared_ptr<const std::string> body);
// - bytes of a file, sent from it by the session; left out when its length is 0 (HEAD, say);
outgoing_response make_file_response(http::response<http::empty_body> head, file_span body);
// - pulled from `body` as it is produced, `length` bytes.
outgoing_response make_streamed_response(http::response<http::empty_body> head, std::uint64_t length,
                                         std::shared_ptr<body_source> body);

// A plain-text message for people and curl: "404 Not Found: no project named 'x'".
outgoing_response make_text_response(const http::request_header<>& request, http::status status,
                                     std::string message, http::fields extra = {});

// The same when no request could be parsed (HTTP/1.1, connection closes). `method` is the
// request's as far as it is known: a HEAD's answer has the same head and no body.
outgoing_response make_text_response_without_request(http::status status, std::string message,
                                                     http::fields extra = {}, http::verb method = http::verb::get);

// The bytes of a response held in memory (a Beast message or a prepared_response), for a
// synchronous write; of a streamed or file response, the head alone.
std::string serialize(outgoing_response response);

}  // namespace wheelhouse::transport
