#pragma once
// The one answer to a download's preconditions and Range, shared by files on this server's disk
// and remote ones (file_routes.cpp, remote_downloads.cpp) and by bytes the catalog holds (a
// release's variants.json), so that every download answer (200, 206, 304, 416, HEAD) carries one
// header set: Server, ETag, Cache-Control and Accept-Ranges, plus Content-Type where bytes are
// described and Content-Range on 206 and 416. A redirect to a remote file's host is answered here
// too, so that every download's caching is decided in one place.

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "wheelhouse/http/conditional.hpp"
#include "wheelhouse/transport/request_handler.hpp"

namespace wheelhouse::app {

class download_answer {
public:
    // `sha256_hex` is the digest of the bytes (their ETag), `size` their count, `modified` when
    // they were stored (Unix seconds: their Last-Modified; 0: unknown, none sent), `content_type`
    // what they are. The answer reads `request` and `content_type` until it is gone: keep it no
    // longer. A download's URL names its sha256, so its bytes never change after `modified`.
    download_answer(const http::request_header<>& request, std::string_view sha256_hex, std::uint64_t size,
                    bool private_index, std::int64_t modified,
                    std::string_view content_type = "application/octet-stream");

    // A request that needs none of the bytes: 304 for a matching If-None-Match (or, without one,
    // an If-Modified-Since at or after `modified`), 416 for a range
    // outside them, or a HEAD's answer. nullopt: send the bytes, under head().
    std::optional<transport::outgoing_response> without_body() const;

    // The whole answer when the bytes are in memory (`body`, `size` bytes long): without_body()'s,
    // else 200 with them or 206 with the range asked for.
    transport::outgoing_response with_body(std::shared_ptr<const std::string> body) const;

    // The range to send (206); nullopt for the whole file (200). If-Range decides here too: our
    // ETag is the file's digest, so a remote host's own validators never take part.
    std::optional<http_conditional::byte_range> range() const;

    // The head of a 206 for range() when `partial`, else of a 200 for the whole file, with
    // Content-Length set; the body's bytes are the caller's to send.
    http::response<http::empty_body> head(bool partial) const;

private:
    bool not_modified() const;
    // ETag, Last-Modified, Cache-Control and Accept-Ranges: what every answer about the file says.
    http::fields validator_fields() const;

    const http::request_header<>& request_;
    std::string etag_;  // quoted
    std::uint64_t size_ = 0;
    bool private_index_ = false;
    std::int64_t modified_ = 0;
    std::string_view content_type_;
    http_conditional::range_decision decision_;
};

// 302 to a remote file's `url` (redirect mode): only ever the catalog's URL (or one the server
// signed), nothing from the request. Cached for `max_age`, not for good: the host may move the
// asset (a re-uploaded release), and a presigned URL expires.
transport::outgoing_response redirect_download(const http::request_header<>& request, const std::string& url,
                                               bool private_index,
                                               std::chrono::seconds max_age = std::chrono::hours(24));

}  // namespace wheelhouse::app
