#pragma once

#include <chrono>
#include <cstddef>

namespace wheelhouse::transport {

// Bounds on what one connection may cost: every read has a deadline and a size limit.
struct session_limits {
    std::size_t header_bytes = 16 * 1024;
    std::chrono::milliseconds idle_timeout{std::chrono::seconds(30)};   // waiting for a request
    std::chrono::milliseconds read_timeout{std::chrono::seconds(30)};   // silence inside a request
    std::chrono::milliseconds write_timeout{std::chrono::seconds(60)};  // a client not reading
};

}  // namespace wheelhouse::transport
