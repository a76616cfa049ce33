#pragma once
// Whole-file reads and copies that hash as they go, so a copy is verified by the pass that
// makes it. Used where files leave or enter a data folder: backup, restore, fsck, export.
//
// Thread safety: free functions on paths; any thread.

#include <cstdint>
#include <filesystem>
#include <string>

#include "wheelhouse/result.hpp"

namespace wheelhouse::storage {

struct file_digest {
    std::string sha256;  // lower-case hex
    std::uint64_t size = 0;
};

// SHA-256 and size of the file at `path`. not_found when it does not exist.
result<file_digest> hash_file(const std::filesystem::path& path);

// Copies `source` to `target` (which must not exist: never replaces), fsyncs it, and returns
// the digest of the bytes written. `mode` is the new file's permission bits. A failed copy
// leaves no `target`. not_found when `source` does not exist.
result<file_digest> copy_file_hashed(const std::filesystem::path& source, const std::filesystem::path& target,
                                     unsigned mode = 0644);

// Writes `bytes` to a new file `target` (never replaces) and fsyncs it.
result<void> write_new_file(const std::filesystem::path& target, std::string_view bytes, unsigned mode = 0644);

// fsync of a directory, so the names made in it survive a crash.
result<void> sync_directory(const std::filesystem::path& directory);

}  // namespace wheelhouse::storage
