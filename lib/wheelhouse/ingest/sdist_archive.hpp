#pragma once
// The archive-level checks of a source distribution (PEP 625: a gzipped tar), read as a stream
// with zlib: gzip and tar framing sound to the last byte (gzip's CRC and length checked, the
// tar's end marker present, nothing after it but zeros), within wheels' size, count and bomb
// limits; every member read as both GNU tar and Python's tarfile read it (tar_stream.hpp) and
// placed where an extraction would put it (extraction_tree.hpp), under exactly one top-level
// directory, links resolved against the links before them; and that directory's PKG-INFO
// read. Nothing here knows the filename; validate_sdist (sdist_validation.hpp) adds those checks.
//
// Memory per archive, whatever its names: the tree (about 120 bytes a path, with at most
// names.max_kept_bytes of names), one member's name and link, one pax header, PKG-INFO (at most
// limits.max_metadata_size) and the inflate buffers (about 200 KiB).

#include <cstdint>
#include <filesystem>
#include <functional>
#include <span>
#include <string>
#include <string_view>

#include "wheelhouse/ingest/tar_stream.hpp"
#include "wheelhouse/ingest/wheel_archive.hpp"
#include "wheelhouse/result.hpp"

namespace wheelhouse::ingest {

struct sdist_archive {
    std::string root;       // the top-level directory: "flash_attn-2.8.3", without the '/'
    std::string pkg_info;   // root/PKG-INFO, byte for byte
    std::uint64_t entry_count = 0;        // members, not counting pax or GNU name headers
    std::uint64_t uncompressed_size = 0;  // bytes of tar inflated
};

// One member as the checks saw it, for `wheelhouse inspect --members` and the tests that hold
// it to what tarfile and GNU tar list.
struct sdist_member {
    tar_entry_type type = tar_entry_type::file;
    std::string_view path;      // as read; a directory's without its trailing '/'
    std::string_view link;      // a link's target, as written
    std::string_view resolved;  // a link's target from the archive's root ("demo-1.0/src/x.py"); else empty
    std::uint64_t size = 0;     // a file's bytes
};

// Called with each member once it passed the checks, in archive order.
using sdist_member_visitor = std::function<void(const sdist_member&)>;

// Reads the .tar.gz at `path` once, start to end. Errors are `invalid` (a bad sdist: 400) or
// `too_large` (past a limit: 413), saying which member and what was wrong; `internal` when the
// file cannot be read. limits.max_compression_ratio applies to the whole stream (a tar is
// compressed as one), past limits.ratio_floor bytes inflated.
result<sdist_archive> read_sdist_archive(const std::filesystem::path& path, const archive_limits& limits = {},
                                         const tar_name_limits& names = {}, const sdist_member_visitor& on_member = {});

// The same over bytes in memory (tests, the fuzz harness).
result<sdist_archive> read_sdist_archive(std::span<const std::uint8_t> bytes, const archive_limits& limits = {},
                                         const tar_name_limits& names = {}, const sdist_member_visitor& on_member = {});

}  // namespace wheelhouse::ingest
