#pragma once
// One SQLite connection, RAII. A connection belongs to one thread at a time: it is opened in
// SQLite's multi-thread mode (no per-call mutex), so two threads must never use it together.

#include <chrono>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>

#include "wheelhouse/result.hpp"
#include "wheelhouse/sqlite/statement.hpp"

struct sqlite3;

namespace wheelhouse::sqlite {

struct connection_options {
    bool read_only = false;       // opened read-write but `PRAGMA query_only`: WAL readers need the -shm file
    bool create = false;          // create the database file when it does not exist
    std::chrono::milliseconds busy_timeout{5000};
};

class connection {
public:
    // Opens `path` with foreign keys on, synchronous=FULL (every commit is synced before it
    // returns) and the busy timeout; a writable connection also switches the database to WAL.
    static result<connection> open(const std::filesystem::path& path, const connection_options& options);

    connection(connection&& other) noexcept;
    connection& operator=(connection&& other) noexcept;
    connection(const connection&) = delete;
    connection& operator=(const connection&) = delete;
    ~connection();

    // Runs one or more statements without results (migrations, pragmas). Never pass it text
    // that holds user input: bound parameters are the only way values enter SQL.
    result<void> execute(std::string_view sql);

    // A new prepared statement owned by the caller.
    result<statement> prepare(std::string_view sql);

    // A statement prepared once per connection and kept; the lease resets it when it goes out of
    // scope, so a read never holds its snapshot longer than the lease. Not re-entrant: one lease
    // per SQL text at a time.
    result<statement_lease> cached(std::string_view sql);

    // One integer from a query such as "PRAGMA user_version".
    result<std::int64_t> query_int64(std::string_view sql);

    std::int64_t last_insert_rowid() const noexcept;
    // False once SQLite has ended the transaction by itself (it rolls back on some errors, a
    // full disk among them), however the transaction object sees it.
    bool in_transaction() const noexcept;
    std::filesystem::path path() const { return path_; }
    sqlite3* handle() const noexcept { return db_; }

private:
    connection(sqlite3* db, std::filesystem::path path) noexcept;

    sqlite3* db_ = nullptr;
    std::filesystem::path path_;
    // Keyed by the SQL text; statements are finalised before the connection closes.
    std::unordered_map<std::string, std::unique_ptr<statement>> cache_;
};

// The error for a failed SQLite call on `db`, with SQLite's own message. Busy, locked and a full
// disk map to `unavailable` (try again later), everything else to `internal`.
error make_sqlite_error(sqlite3* db, int code, std::string_view what);

}  // namespace wheelhouse::sqlite
