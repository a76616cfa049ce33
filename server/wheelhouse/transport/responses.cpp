#include "wheelhouse/transport/responses.hpp"

#include <algorithm>
#include <charconv>
#include <sstream>

#include "wheelhouse/text/utf8.hpp"

namespace wheelhouse::transport {
namespace {

void copy_fields(http::fields& to, const http::fields& from) {
    for (const auto& field : from) to.insert(field.name_string(), field.value());
}

std::string serialize_message(http::message_generator& message) {
    std::string bytes;
    error_code ec;
    while (!message.is_done()) {
        const auto buffers = message.prepare(ec);
        if (ec) break;
        for (const auto buffer : beast::buffers_range_ref(buffers))
            bytes.append(static_cast<const char*>(buffer.data()), buffer.size());
        message.consume(beast::buffer_bytes(buffers));
    }
    return bytes;
}

// `head` with Content-Length `length`, in Beast's own serialisation: status line, fields, blank line.
prepared_head prepared_head_of(http::response<http::empty_body>& head, std::uint64_t length) {
    head.content_length(length);
    std::ostringstream text;
    text << head.base();
    return {std::move(text).str(), head.keep_alive()};
}

}  // namespace

http::status status_for(error_kind kind) noexcept {
    switch (kind) {
        case error_kind::invalid: return http::status::bad_request;
        case error_kind::unauthorized: return http::status::unauthorized;
        case error_kind::forbidden: return http::status::forbidden;
        case error_kind::not_found: return http::status::not_found;
        case error_kind::conflict: return http::status::conflict;
        case error_kind::too_large: return http::status::payload_too_large;
        case error_kind::unavailable: return http::status::service_unavailable;
        case error_kind::upstream: return http::status::bad_gateway;
        case error_kind::timeout: return http::status::gateway_timeout;
        case error_kind::internal: return http::status::internal_server_error;
    }
    return http::status::internal_server_error;
}

bool wants_keep_alive(const http::request_header<>& request) {
    // Connection is a list, and a list may be split over several fields (RFC 9110 §5.3): every one counts.
    bool close = false;
    bool keep_alive = false;
    for (const auto& field : request) {
        if (field.name() != http::field::connection) continue;
        http::token_list options{field.value()};  // exists() is not const in Beast 1.81
        close = close || options.exists("close");
        keep_alive = keep_alive || options.exists("keep-alive");
    }
    return !close && (request.version() >= 11 || keep_alive);
}

outgoing_response make_shared_response(const http::request_header<>& request, http::status status,
                                       std::string_view content_type, std::shared_ptr<const std::string> body,
                                       http::fields extra) {
    const std::uint64_t length = body ? body->size() : 0;
    if (request.method() == http::verb::head) {
        http::response<http::empty_body> response{status, request.version()};
        response.set(http::field::server, server_name);
        response.set(http::field::content_type, content_type);
        copy_fields(response.base(), extra);
        response.keep_alive(wants_keep_alive(request));
        response.content_length(length);
        const unsigned code = response.result_int();
        return outgoing_response{http::message_generator(std::move(response)), code, 0};
    }
    http::response<shared_string_body> response{status, request.version()};
    response.set(http::field::server, server_name);
    response.set(http::field::content_type, content_type);
    copy_fields(response.base(), extra);
    response.keep_alive(wants_keep_alive(request));
    response.body() = std::move(body);
    return finish(std::move(response));
}

outgoing_response make_prepared_response(http::response<http::empty_body> head,
                                         std::shared_ptr<const std::string> body) {
    const std::uint64_t length = body ? body->size() : 0;
    const unsigned status = head.result_int();
    return {prepared_response{prepared_head_of(head, length), std::move(body), nullptr}, status, length};
}

outgoing_response make_file_response(http::response<http::empty_body> head, file_span body) {
    if (body.length == 0) return make_prepared_response(std::move(head), nullptr);
    const unsigned status = head.result_int();
    const std::uint64_t length = body.length;
    return {file_response{prepared_head_of(head, length), std::move(body)}, status, length};
}

outgoing_response make_streamed_response(http::response<http::empty_body> head, std::uint64_t length,
                                         std::shared_ptr<body_source> body) {
    const unsigned status = head.result_int();
    return {streamed_response{prepared_head_of(head, length), std::move(body)}, status, length};
}

outgoing_response make_prepared_response(const http::request_header<>& request, http::status status,
                                         std::span<const header_field> fields,
                                         std::shared_ptr<const std::string> body,
                                         std::shared_ptr<storage::descriptor> body_file) {
    const bool keep_alive = wants_keep_alive(request);
    const unsigned version = request.version() == 10 ? 10 : 11;
    const auto code = static_cast<unsigned>(status);
    char length[24];
    const std::string_view length_text(length, body ? std::to_chars(length, length + sizeof length, body->size()).ptr - length : 0);
    // As Beast's keep_alive(): say so only where the version's default differs.
    std::string_view connection;
    if (version == 11 && !keep_alive) connection = "close";
    if (version == 10 && keep_alive) connection = "keep-alive";
    const std::string_view reason = http::obsolete_reason(status);

    // Every cached page and redirect is written here: sized once, then copied, with no
    // re-allocation or per-piece length scan.
    std::size_t size = std::string_view("HTTP/1.1 200 \r\n\r\n").size() + reason.size();
    const auto line_size = [](std::string_view name, std::string_view value) { return name.size() + value.size() + 4; };
    size += line_size(http::to_string(http::field::server), server_name);
    for (const auto& [name, value] : fields) size += line_size(http::to_string(name), value);
    if (!connection.empty()) size += line_size("Connection", connection);
    if (body) size += line_size("Content-Length", length_text);

    prepared_response out{{std::string(size, '\0'), keep_alive}, nullptr, nullptr};
    char* at = out.head.text.data();
    const auto put = [&at](std::string_view piece) { at = std::copy(piece.begin(), piece.end(), at); };
    const auto add = [&put](std::string_view name, std::string_view value) {
        put(name);
        put(": ");
        put(value);
        put("\r\n");
    };
    put(version == 10 ? "HTTP/1.0 " : "HTTP/1.1 ");
    at = std::to_chars(at, at + 3, code).ptr;
    put(" ");
    put(reason);
    put("\r\n");
    add(http::to_string(http::field::server), server_name);
    for (const auto& [name, value] : fields) add(http::to_string(name), value);
    if (!connection.empty()) add("Connection", connection);
    if (body) add("Content-Length", length_text);
    put("\r\n");
    std::uint64_t body_bytes = 0;
    if (body && request.method() != http::verb::head) {
        body_bytes = body->size();
        out.body = std::move(body);
        out.body_file = std::move(body_file);
    }
    return {std::move(out), code, body_bytes};
}

outgoing_response make_text_response(const http::request_header<>& request, http::status status,
                                     std::string message, http::fields extra) {
    const std::string reason{http::obsolete_reason(status)};
    // The message may echo what the client sent: the body is labelled UTF-8, so it is.
    auto body = std::make_shared<const std::string>(std::to_string(static_cast<unsigned>(status)) + " " + reason +
                                                    ": " + text::replace_invalid_utf8(message) + "\n");
    return make_shared_response(request, status, "text/plain; charset=utf-8", std::move(body), std::move(extra));
}

outgoing_response make_text_response_without_request(http::status status, std::string message,
                                                     http::fields extra, http::verb method) {
    http::request_header<> request;
    request.version(11);
    request.method(method);
    request.set(http::field::connection, "close");
    return make_text_response(request, status, std::move(message), std::move(extra));
}

std::string serialize(outgoing_response response) {
    return std::visit(overloaded{
                          [](http::message_generator& message) { return serialize_message(message); },
                          [](const prepared_response& prepared) {
                              return prepared.head.text + (prepared.body ? *prepared.body : std::string());
                          },
                          [](const auto& body_elsewhere) { return body_elsewhere.head.text; },
                      },
                      response.shape);
}

}  // namespace wheelhouse::transport
