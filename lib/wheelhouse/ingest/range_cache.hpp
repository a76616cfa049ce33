#pragma once
// Random access to a file that lives elsewhere (a release asset behind HTTP Range requests),
// through a caller's fetch function and a cache of the byte ranges already fetched, so the
// zip reader's many small reads cost a few requests and the bytes transferred are counted.
// No sockets here: the server supplies `fetch`, the tests read a local file.
//
// Thread safety: none; one cache belongs to one registration.

#include <cstdint>
#include <functional>
#include <map>
#include <string>

#include "wheelhouse/result.hpp"

namespace wheelhouse::ingest {

// Returns exactly `length` bytes from `offset` (the caller keeps offset + length <= size), or
// an error that says why (upstream for a failed request).
using range_fetch = std::function<result<std::string>(std::uint64_t offset, std::uint64_t length)>;

class range_cache {
public:
    // `readahead`: the least a fetch asks for, so sequential small reads share one request.
    range_cache(std::uint64_t size, range_fetch fetch, std::uint64_t readahead = 64 * 1024);

    // Bytes the caller already has (the suffix a size probe returned); not counted as fetched
    // here, the caller counts what it transferred for them.
    void seed(std::uint64_t offset, std::string bytes);

    // `length` bytes from `offset`, fetching only the parts not held yet.
    result<std::string> read(std::uint64_t offset, std::uint64_t length);

    std::uint64_t size() const noexcept { return size_; }
    std::uint64_t bytes_fetched() const noexcept { return bytes_fetched_; }
    std::uint64_t fetch_count() const noexcept { return fetch_count_; }

private:
    std::uint64_t size_;
    range_fetch fetch_;
    std::uint64_t readahead_;
    std::map<std::uint64_t, std::string> segments_;  // by offset; never overlapping
    std::uint64_t bytes_fetched_ = 0;
    std::uint64_t fetch_count_ = 0;
};

}  // namespace wheelhouse::ingest
