#include "wheelhouse/transport/request_refusals.hpp"

#include <algorithm>
#include <array>
#include <vector>

#include <sys/socket.h>

#include "wheelhouse/text/ascii.hpp"

namespace wheelhouse::transport {
namespace {

using text::trim;

// The codings of every Transfer-Encoding field in order, by name (parameters dropped); empty
// list elements are skipped as RFC 9110 §5.6.1 asks.
std::vector<std::string_view> transfer_codings(const http::request_header<>& header) {
    std::vector<std::string_view> codings;
    const auto [first, last] = header.equal_range(http::field::transfer_encoding);
    for (auto field = first; field != last; ++field) {
        std::string_view list = field->value();
        while (!list.empty()) {
            const auto comma = list.find(',');
            auto element = list.substr(0, comma);
            list = comma == std::string_view::npos ? std::string_view{} : list.substr(comma + 1);
            element = trim(element.substr(0, element.find(';')));
            if (!element.empty()) codings.push_back(element);
        }
    }
    return codings;
}

std::string bytes(std::size_t count) { return std::to_string(count) + " bytes"; }

std::string duration_text(std::chrono::milliseconds duration) {
    if (duration.count() % 1000 == 0) return std::to_string(duration.count() / 1000) + " s";
    return std::to_string(duration.count()) + " ms";
}

}  // namespace

bool starts_head_request(std::string_view bytes) {
    return bytes.starts_with("HEAD ");  // methods are case-sensitive (RFC 9110 §9.1)
}

void answer_and_close(tcp::socket& socket, std::string_view answer) {
    const int fd = socket.native_handle();
    [[maybe_unused]] const auto sent = ::send(fd, answer.data(), answer.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
    error_code ignored;
    socket.shutdown(tcp::socket::shutdown_send, ignored);
    std::array<char, 4096> scratch{};
    for (int turn = 0; turn < 16 && ::recv(fd, scratch.data(), scratch.size(), MSG_DONTWAIT) > 0; ++turn) {
    }
    socket.close(ignored);
}

std::optional<request_refusal> check_framing(const http::request_header<>& header) {
    std::size_t hosts = 0;
    bool transfer_encoded = false;
    for (const auto& field : header) {
        hosts += field.name() == http::field::host ? 1 : 0;
        transfer_encoded = transfer_encoded || field.name() == http::field::transfer_encoding;
    }
    // RFC 9112 §3.2: which host was meant cannot be known (the trusted-publishing routes name the index by it).
    if (hosts > 1) {
        return request_refusal{http::status::bad_request, "send one Host field: this request has " +
                                                              std::to_string(hosts) + " (RFC 9112 §3.2)"};
    }
    if (!transfer_encoded) return std::nullopt;
    // RFC 9112 §6.1: Transfer-Encoding in HTTP/1.0 is faulty framing, whatever else is sent.
    if (header.version() < 11) {
        return request_refusal{
            http::status::bad_request,
            "send the body with a Content-Length: HTTP/1.0 has no Transfer-Encoding (RFC 9112 §6.1)"};
    }
    const auto codings = transfer_codings(header);
    // RFC 9112 §6.3: unless chunked is last, the body's end cannot be known: 400 and close.
    if (codings.empty() || !beast::iequals(codings.back(), "chunked")) {
        return request_refusal{http::status::bad_request,
                               "end Transfer-Encoding with chunked, or send a Content-Length instead: without chunked "
                               "last the body's end cannot be known (RFC 9112 §6.3)"};
    }
    const auto chunked = std::count_if(codings.begin(), codings.end(),
                                       [](std::string_view coding) { return beast::iequals(coding, "chunked"); });
    // RFC 9112 §7: chunked is applied once.
    if (chunked > 1) {
        return request_refusal{http::status::bad_request,
                               "apply chunked once: Transfer-Encoding lists it " + std::to_string(chunked) +
                                   " times (RFC 9112 §7)"};
    }
    // RFC 9112 §6.1: a transfer coding the server does not understand is 501 (gzip, say; none is
    // implemented here but chunked).
    if (codings.size() > 1) {
        return request_refusal{http::status::not_implemented,
                               "send the body with Transfer-Encoding: chunked alone: this server does not implement "
                               "the '" + std::string(codings.front()) + "' transfer coding (RFC 9112 §6.1)"};
    }
    // Beast refuses the pair while parsing; RFC 9112 §6.1 says to close after refusing it anyway.
    if (header.find(http::field::content_length) != header.end()) {
        return request_refusal{http::status::bad_request,
                               "send either Content-Length or Transfer-Encoding, not both (RFC 9112 §6.1)"};
    }
    return std::nullopt;
}

request_refusal header_refusal(error_code ec, const session_limits& limits) {
    if (ec == http::error::header_limit) {
        return {http::status::request_header_fields_too_large,
                "send fewer or shorter headers: the request's headers are larger than " + bytes(limits.header_bytes)};
    }
    if (ec == http::error::bad_content_length) {
        return {http::status::bad_request,
                "send one Content-Length of decimal digits, and no Transfer-Encoding beside it (RFC 9112 §6.3)"};
    }
    if (ec == http::error::multiple_content_length) {
        return {http::status::bad_request,
                "send one Content-Length: this request has several that differ (RFC 9112 §6.3)"};
    }
    if (ec == http::error::bad_transfer_encoding) {
        return {http::status::bad_request,
                "send one Transfer-Encoding ending in chunked, and no Content-Length beside it (RFC 9112 §6.1)"};
    }
    return {http::status::bad_request,
            "send HTTP/1.1 as RFC 9112 defines it: this is a malformed HTTP request (" + ec.message() + ")"};
}

request_refusal unfinished_header_refusal() {
    return {http::status::bad_request,
            "end the request's headers with an empty line: the connection ended inside them"};
}

request_refusal body_refusal(error_code ec) {
    if (ec == http::error::bad_chunk || ec == http::error::bad_chunk_extension) {
        return {http::status::bad_request,
                "send each chunk as its size in hexadecimal, CRLF, its data and CRLF (RFC 9112 §7.1): this "
                "chunked body is malformed (" + ec.message() + ")"};
    }
    return {http::status::bad_request, "send a well-formed request body: this one is malformed (" + ec.message() + ")"};
}

request_refusal chunk_extensions_refusal(const session_limits& limits) {
    return {http::status::bad_request,
            "send the body without chunk extensions: this body's chunk-size lines and extensions pass " +
                bytes(limits.chunk_extension_bytes)};
}

request_refusal trailer_refusal(const session_limits& limits) {
    return {http::status::request_header_fields_too_large,
            "send fewer or shorter trailer fields: the request's headers and trailers together pass " +
                bytes(limits.header_bytes)};
}

request_refusal stalled_body_refusal(const session_limits& limits) {
    return {http::status::request_timeout,
            "send the request again without pausing: nothing of its body arrived for " +
                duration_text(limits.read_timeout)};
}

request_refusal slow_body_refusal(const session_limits& limits, std::uint64_t received_bytes,
                                  std::chrono::milliseconds elapsed) {
    const auto seconds = std::max(0.001, std::chrono::duration<double>(elapsed).count());
    const auto rate = static_cast<std::uint64_t>(static_cast<double>(received_bytes) / seconds);
    return {http::status::request_timeout,
            "send the request again over a faster link: its body arrived at " + std::to_string(rate) +
                " bytes a second, below this server's minimum of " + std::to_string(limits.min_body_rate) +
                " (--min-body-rate)"};
}

}  // namespace wheelhouse::transport
