#pragma once
// A consistent copy of a live SQLite database by SQLite's online backup API, and the check that
// a copy is sound. The copy is taken in steps, so a large catalog never holds a read
// transaction open for long while the server keeps writing; if writes keep restarting the
// steps, the rest is copied in one step (under WAL, a reader never blocks the writer).
//
// Thread safety: free functions; each opens its own connections.

#include <chrono>
#include <cstdint>
#include <filesystem>

#include "wheelhouse/result.hpp"

namespace wheelhouse::backup {

struct database_copy_options {
    int pages_per_step = 1024;                // 4 MiB at SQLite's default page size
    int restarts_before_one_step = 3;         // writes during the copy restart it; then copy the rest at once
    std::chrono::milliseconds busy_pause{20};  // between steps that found the source locked
};

struct database_copy_report {
    std::int64_t pages = 0;
    int steps = 0;
    int restarts = 0;
    std::int64_t schema_version = 0;  // PRAGMA user_version of the copy
};

// Copies the database `source` to the new file `target` (which must not exist), switches the
// copy to a rollback journal so it is one self-contained file, runs PRAGMA integrity_check on
// it and fsyncs it. On any failure `target` is removed.
result<database_copy_report> copy_database(const std::filesystem::path& source, const std::filesystem::path& target,
                                           const database_copy_options& options = {});

// PRAGMA integrity_check on a database file, opened read-only. `invalid` with SQLite's first
// findings when it is damaged or not a database at all.
result<void> check_database(const std::filesystem::path& database);

}  // namespace wheelhouse::backup
