#pragma once
// The zip-level checks of a wheel, by libzip: a sound archive within size limits, safe entry
// names, exactly one top-level *.dist-info/ holding METADATA, WHEEL and RECORD, a WHEEL of
// version 1.x, and a RECORD that lists every entry with its true hash and size. Nothing here
// knows the wheel's filename; validate_wheel (wheel_validation.hpp) adds those checks.

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include "wheelhouse/result.hpp"

namespace wheelhouse::ingest {

// What a wheel may unpack to. Declared sizes are checked first; actual bytes are counted while
// inflating, so an archive that lies about its sizes is stopped at the limit as well.
struct archive_limits {
    std::uint64_t max_entries = 100'000;
    std::uint64_t max_total_uncompressed = 16ULL << 30;  // torch-sized wheels unpack to several GiB
    std::uint64_t max_entry_uncompressed = 8ULL << 30;
    // uncompressed/compressed, per entry, for entries above ratio_floor: real shared objects
    // and CUDA fat binaries compress 2-20x; a zip bomb's entries 1000x.
    std::uint64_t max_compression_ratio = 250;
    std::uint64_t ratio_floor = 1ULL << 20;
    std::uint64_t max_metadata_size = 16ULL << 20;  // METADATA, WHEEL and RECORD are read into memory
    // A remote archive's central directory is fetched whole before it is parsed.
    std::uint64_t max_central_directory = 64ULL << 20;
};

class range_cache;

struct wheel_archive {
    std::string dist_info;  // "flash_attn-2.8.3.dist-info", without the trailing '/'
    std::string metadata;   // *.dist-info/METADATA, byte for byte
    std::string wheel;      // *.dist-info/WHEEL
    // *.dist-info/variant.json (PEP 825), when there is one: its size as the archive declares
    // it, and its bytes when that is within pep825::limits' (past it, it is not inflated).
    std::optional<std::uint64_t> variant_json_size;
    std::optional<std::string> variant_json;
    std::uint64_t entry_count = 0;
    std::uint64_t uncompressed_size = 0;  // bytes actually inflated; declared, for a remote archive
    bool entries_verified = true;         // every entry inflated and held to RECORD; not for a remote archive
};

// Opens the zip at `path` and runs every check above, reading every entry once. Errors are
// `invalid` (a bad wheel: 400) or `too_large` (past a size limit: 413), with a message that
// names the entry and what was wrong; `internal` when the file cannot be read at all.
result<wheel_archive> read_wheel_archive(const std::filesystem::path& path, const archive_limits& limits = {});

// The checks that need only the archive's directory, WHEEL and METADATA, for an archive that
// lives elsewhere: reads the end records, the central directory (refused past
// limits.max_central_directory, or when it runs past the end), WHEEL and METADATA (whose CRC is
// checked), and nothing else. Entry names, the single dist-info with METADATA/WHEEL/RECORD,
// declared sizes and compression ratios are checked as for a local file; RECORD's hashes are
// not (that needs every byte). Errors as read_wheel_archive's, and the reader's own
// (upstream) when a range cannot be fetched.
result<wheel_archive> read_remote_wheel_archive(range_cache& file, const archive_limits& limits = {});

// The name checks on one entry: not empty, relative, no "..", no backslash, no empty or "."
// component. Directory entries end with '/'.
result<void> check_entry_name(std::string_view name);

// WHEEL must declare Wheel-Version 1.x.
result<void> check_wheel_metadata(std::string_view wheel);

}  // namespace wheelhouse::ingest
