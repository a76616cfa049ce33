#pragma once
// Why a request is refused while the session reads it: its framing (RFC 9112 §6 and §7), a
// limit, or a deadline. Each refusal carries its status and a message that leads with the fix;
// the session answers it and closes the connection, since the rest of the stream cannot be
// trusted to start at a request.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "wheelhouse/transport/net.hpp"
#include "wheelhouse/transport/session_limits.hpp"

namespace wheelhouse::transport {

struct request_refusal {
    http::status status;
    std::string message;
};

// Whether `bytes`, the start of a request no parser has read yet, is a HEAD: a refusal written
// before the request line is parsed must still leave out its body (RFC 9110 §9.3.2).
bool starts_head_request(std::string_view bytes);

// Answers a connection no session reads with `answer` (a whole response) and closes it, after
// reading and dropping what the client sent, so the close does not reset the connection under
// the answer (RFC 9112 §9.6). Never waits: the answer must fit a fresh socket's send buffer.
void answer_and_close(tcp::socket& socket, std::string_view answer);

// What Beast's parser would accept but a server must not guess at: more than one Host field, a
// Transfer-Encoding whose last coding is not chunked, chunked twice, a coding this server does
// not implement, or any Transfer-Encoding in HTTP/1.0.
std::optional<request_refusal> check_framing(const http::request_header<>& header);

// A header block the parser refused (`ec` from Beast).
request_refusal header_refusal(error_code ec, const session_limits& limits);
// The connection ended inside the header block.
request_refusal unfinished_header_refusal();
// A body the parser refused (`ec` from Beast: chunk framing and the like).
request_refusal body_refusal(error_code ec);
// Limits on what a chunked body carries beside its data.
request_refusal chunk_extensions_refusal(const session_limits& limits);
request_refusal trailer_refusal(const session_limits& limits);
// The body's read deadline passed: it stalled for read_timeout, or fell below min_body_rate.
request_refusal stalled_body_refusal(const session_limits& limits);
request_refusal slow_body_refusal(const session_limits& limits, std::uint64_t received_bytes,
                                  std::chrono::milliseconds elapsed);

}  // namespace wheelhouse::transport
