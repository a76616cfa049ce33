#pragma once
// The archive-level checks of a source distribution (PEP 625: a gzipped tar), read as a stream
// with zlib: gzip and tar framing sound to the last byte (gzip's CRC and length checked, the
// tar's end marker present, nothing after it but zeros), within wheels' size, count and bomb
// limits, every member a file, directory or link with a safe relative name under exactly one
// top-level directory, links that stay inside it, and that directory's PKG-INFO read. Nothing
// here knows the filename; validate_sdist (sdist_validation.hpp) adds those checks.

#include <cstdint>
#include <filesystem>
#include <span>
#include <string>

#include "wheelhouse/ingest/wheel_archive.hpp"
#include "wheelhouse/result.hpp"

namespace wheelhouse::ingest {

struct sdist_archive {
    std::string root;       // the top-level directory: "flash_attn-2.8.3", without the '/'
    std::string pkg_info;   // root/PKG-INFO, byte for byte
    std::uint64_t entry_count = 0;        // members, not counting pax or GNU name headers
    std::uint64_t uncompressed_size = 0;  // bytes of tar inflated
};

// Reads the .tar.gz at `path` once, start to end. Errors are `invalid` (a bad sdist: 400) or
// `too_large` (past a limit: 413), saying which member and what was wrong; `internal` when the
// file cannot be read. limits.max_compression_ratio applies to the whole stream (a tar is
// compressed as one), past limits.ratio_floor bytes inflated.
result<sdist_archive> read_sdist_archive(const std::filesystem::path& path, const archive_limits& limits = {});

// The same over bytes in memory (tests, the fuzz harness).
result<sdist_archive> read_sdist_archive(std::span<const std::uint8_t> bytes, const archive_limits& limits = {});

}  // namespace wheelhouse::ingest
