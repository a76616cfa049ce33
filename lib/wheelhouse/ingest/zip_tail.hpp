#pragma once
// Where a zip archive's central directory is, read from its end records (the end of central
// directory record and, for ZIP64, its locator and record), so a remote archive's directory
// can be checked for size and bounds, and fetched in one request, before libzip reads it.

#include <cstdint>
#include <string_view>

#include "wheelhouse/result.hpp"

namespace wheelhouse::ingest {

class range_cache;

// The most a zip's end can hold after the central directory: the end record (22 bytes), its
// comment (up to 65535) and the ZIP64 locator (20). Reading this many final bytes finds it.
inline constexpr std::uint64_t zip_tail_size = 22 + 65535 + 20;

struct central_directory {
    std::uint64_t offset = 0;
    std::uint64_t size = 0;
    std::uint64_t entries = 0;
    std::uint64_t end_offset = 0;  // where the end records start (ZIP64's when present)
    bool zip64 = false;
};

// Finds the central directory of `file` from its last zip_tail_size bytes (and the ZIP64 end
// record, wherever its locator points). Errors: invalid (not a zip, truncated, multi-disk),
// too_large (a directory past `max_size` bytes or `max_entries` entries); the reader's own.
result<central_directory> locate_central_directory(range_cache& file, std::uint64_t max_size,
                                                   std::uint64_t max_entries);

}  // namespace wheelhouse::ingest
