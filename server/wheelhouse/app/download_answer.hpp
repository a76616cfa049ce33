#pragma once
// The one answer to a download's preconditions and Range, shared by files on this server's disk
// (file_routes.cpp) and remote ones (remote_downloads.cpp), so that every download answer
// (200, 206, 304, 416, HEAD) carries one header set: Server, ETag, Cache-Control and
// Accept-Ranges, plus Content-Type where bytes are described and Content-Range on 206 and 416.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "wheelhouse/http/conditional.hpp"
#include "wheelhouse/transport/request_handler.hpp"

namespace wheelhouse::app {

class download_answer {
public:
    // `sha256_hex` is the digest of the file's bytes (its ETag), `size` their count. The answer
    // reads `request` until it is gone: keep it no longer.
    download_answer(const http::request_header<>& request, std::string_view sha256_hex, std::uint64_t size,
                    bool private_index);

    // A request that needs none of the bytes: 304 for a matching If-None-Match, 416 for a range
    // outside the file, or a HEAD's answer. nullopt: send the bytes, under head().
    std::optional<transport::outgoing_response> without_body() const;

    // The range to send (206); nullopt for the whole file (200). If-Range decides here too: our
    // ETag is the file's digest, so a remote host's own validators never take part.
    std::optional<http_conditional::byte_range> range() const;

    // The head of a 206 for range() when `partial`, else of a 200 for the whole file, with
    // Content-Length set; the body's bytes are the caller's to send.
    http::response<http::empty_body> head(bool partial) const;

private:
    // ETag, Cache-Control and Accept-Ranges: what every answer about the file says.
    http::fields validator_fields() const;

    const http::request_header<>& request_;
    std::string etag_;  // quoted
    std::uint64_t size_ = 0;
    bool private_index_ = false;
    http_conditional::range_decision decision_;
};

}  // namespace wheelhouse::app
