#pragma once
// manifest.json of a backup folder: what the backup holds and the SHA-256 of every file in it,
// written last, so a folder without it is not a finished backup and a file that does not
// match it is corrupt or truncated.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "wheelhouse/result.hpp"

namespace wheelhouse::backup {

inline constexpr std::string_view manifest_name = "manifest.json";
inline constexpr std::string_view catalog_name = "catalog.db";
inline constexpr std::string_view manifest_format = "wheelhouse-backup";
inline constexpr std::int64_t manifest_format_version = 1;

struct manifest_entry {
    std::string path;  // relative to the backup folder, '/'-separated
    std::string sha256;
    std::uint64_t size = 0;
};

struct manifest {
    std::string created;              // ISO 8601 UTC
    std::int64_t schema_version = 0;  // PRAGMA user_version of the catalog copy
    std::int64_t file_rows = 0;
    bool includes_blobs = false;
    manifest_entry catalog;              // path is always "catalog.db"
    std::vector<manifest_entry> blobs;   // blobs/sha256/ab/cd/<sha256>[.metadata], sorted by path
};

std::string to_json(const manifest& contents);

// `invalid` naming the first thing wrong: not JSON, another format or a newer version, a
// missing or mistyped field, a path outside the blob store's layout (a manifest is input: it
// must not be able to name ../ or absolute paths), a blob whose digest is not its name.
result<manifest> parse_manifest(std::string_view text);

}  // namespace wheelhouse::backup
