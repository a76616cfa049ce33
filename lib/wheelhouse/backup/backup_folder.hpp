#pragma once
// `wheelhouse backup` and `wheelhouse restore`: a backup is a folder laid out like a data folder
//   catalog.db                            a consistent copy of the live catalog (online backup API)
//   blobs/sha256/ab/cd/<sha256>[.metadata] with --blobs: every blob and METADATA the copy's rows use
//                                         (without, a folder whose files are in a bucket still gives
//                                         its METADATA, which lives only in DATA)
//   manifest.json                         the SHA-256 and size of each of the above, written last
// A folder, not a tar: restoring is copying files to the same relative paths, each checked
// against the manifest as it is copied, with no archive format to write or parse, and a backup
// can be inspected, rsync'ed or partly restored with ordinary tools.
// Both are built under a temporary name and renamed into place when complete.
//
// Thread safety: free functions; safe to run while a server writes the same data folder.

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "wheelhouse/backup/database_copy.hpp"
#include "wheelhouse/backup/manifest.hpp"
#include "wheelhouse/result.hpp"
#include "wheelhouse/storage/object_store.hpp"

namespace wheelhouse::backup {

struct backup_options {
    bool include_blobs = false;
    // Where the files of rows of mode local are when DATA/bucket names a bucket (null: under
    // blobs/). It must be the bucket DATA/bucket records; --blobs then copies them out of it.
    storage::object_store* bucket = nullptr;
    database_copy_options copy;
};

struct backup_report {
    std::filesystem::path location;
    std::int64_t file_rows = 0;
    std::size_t blobs = 0;           // wheel files copied
    std::size_t metadata_files = 0;  // .metadata files copied
    std::uint64_t bytes = 0;         // all files, catalog included
    database_copy_report database;
    // Problems of the data folder the backup could not carry over (a missing or corrupt blob):
    // the backup is complete for everything else. `wheelhouse fsck` says more.
    std::vector<std::string> warnings;
};

// Backs up DATA (`data_dir`) into the new folder `out`, which must be absent or empty.
// Errors: not_found (no catalog in `data_dir`), invalid (`out` is taken), internal (cannot
// write, or the copy failed its integrity check). Nothing is left at `out` on failure.
result<backup_report> create_backup(const std::filesystem::path& data_dir, const std::filesystem::path& out,
                                    const backup_options& options = {});

// Reads and checks a backup's manifest.json: `invalid` when there is none (a backup cut off
// before its end has none) or it is damaged.
result<manifest> read_manifest(const std::filesystem::path& backup_dir);

struct restore_report {
    std::filesystem::path location;
    manifest contents;
    std::uint64_t bytes = 0;
};

// Restores the backup folder `backup_dir` into the new data folder `data_dir` (absent or
// empty: a restore never overwrites a catalog). Every file is checked against the manifest
// while it is copied and the catalog by PRAGMA integrity_check, then the catalog's schema is
// brought up to date; only then is the folder renamed into place. `invalid` names the file
// that is missing, truncated or corrupt.
result<restore_report> restore_backup(const std::filesystem::path& backup_dir, const std::filesystem::path& data_dir);

}  // namespace wheelhouse::backup
