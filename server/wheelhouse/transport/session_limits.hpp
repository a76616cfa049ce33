#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>

namespace wheelhouse::transport {

// Bounds on what one connection may cost: every read has a deadline and a size limit.
struct session_limits {
    // The request line and header fields; a chunked body's trailer fields count with them.
    // Less than the session's 64 KiB read buffer, which holds a whole header block or trailer.
    std::size_t header_bytes = 16 * 1024;
    // The chunk extensions of one request body, all together, with the chunk-size lines that
    // carry them (pip, uv, twine and curl send none).
    std::size_t chunk_extension_bytes = 4 * 1024;
    std::chrono::milliseconds idle_timeout{std::chrono::seconds(30)};   // waiting for a request
    // A TLS handshake, from the connection's first byte to its end (no longer than idle_timeout):
    // a client that starts one and stalls holds its connection no longer than a bad request line.
    std::chrono::milliseconds handshake_timeout{std::chrono::seconds(10)};
    std::chrono::milliseconds read_timeout{std::chrono::seconds(30)};   // silence inside a request
    std::chrono::milliseconds write_timeout{std::chrono::seconds(60)};  // a client not reading
    // After read_timeout, a body must have kept up this average rate; 0 turns the check off
    // (http_session.cpp, paced_deadline, says why a rate and not a fixed deadline).
    std::uint64_t min_body_rate = 4 * 1024;  // bytes a second
    // After a response that ends the connection (a 401 or 413 on an upload whose body is unread),
    // what the client still sends is read and dropped, so its unread bytes do not reset the
    // connection under the response. The linger lasts while the bytes keep coming: it ends after
    // linger_timeout of silence, or below min_body_rate past linger_timeout, and at linger_time
    // in all (nginx's lingering_timeout and lingering_time).
    std::chrono::milliseconds linger_timeout{std::chrono::seconds(2)};
    std::chrono::milliseconds linger_time{std::chrono::seconds(30)};
    // Connections open at once, all clients together. At the cap, a new connection closes the
    // connection lingering longest, else the one idle longest (session_registry::make_room);
    // when every connection is busy, it gets 503 at once. 0: default_max_connections().
    std::size_t max_connections = 0;
    // Connections one client may hold at once (one IPv4 address or IPv6 /64: address_share);
    // past it the client's new connection gets 503 at once. 0: no share, as by default: behind a
    // proxy or a NAT every client has the proxy's address.
    std::size_t max_connections_per_address = 0;
};

// How many sessions picked while idle may be giving way at once under a cap of
// `max_connections` (session_registry::make_room): each may answer one last request, so the
// connections open are at most the cap and this many more (and lingering ones closing). Two
// at least, so one that has closed but is not yet gone from the registry never stops the next
// new connection alone.
constexpr std::size_t most_giving_way(std::size_t max_connections) noexcept {
    return max_connections / 16 > 2 ? max_connections / 16 : 2;
}

// A connection cap that leaves room, within the process's file-descriptor limit, for what a
// connection may open beside its socket (an upload's spool file, a blob sent with sendfile, a
// remote fetch), for the sessions giving way past the cap, and for the server's own
// descriptors (catalog, logs, ingest workers).
std::size_t default_max_connections(unsigned io_threads);

}  // namespace wheelhouse::transport
