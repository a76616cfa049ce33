#include "wheelhouse/sqlite/connection.hpp"

#include <sqlite3.h>

#include <utility>

namespace wheelhouse::sqlite {

error make_sqlite_error(sqlite3* db, int code, std::string_view what) {
    std::string message = "catalog database: ";
    message += what;
    message += ": ";
    // The connection's message is more specific ("UNIQUE constraint failed: files.filename")
    // than the code's, when it belongs to this failure.
    const char* detail = (db != nullptr && sqlite3_errcode(db) == code) ? sqlite3_errmsg(db) : sqlite3_errstr(code);
    message += detail;
    const int primary = code & 0xff;
    if (primary == SQLITE_BUSY || primary == SQLITE_LOCKED) {
        return make_error(error_kind::unavailable, message + " (another writer holds the database; try again)");
    }
    if (primary == SQLITE_FULL) {
        // Not our fault and not permanent: the same request succeeds once space is freed.
        return make_error(error_kind::unavailable, "the disk holding the catalog is full; nothing was stored. Free "
                                                   "space on it, then try again (" + message + ")");
    }
    return make_error(error_kind::internal, std::move(message));
}

connection::connection(sqlite3* db, std::filesystem::path path) noexcept : db_(db), path_(std::move(path)) {}

connection::connection(connection&& other) noexcept
    : db_(std::exchange(other.db_, nullptr)), path_(std::move(other.path_)), cache_(std::move(other.cache_)) {}

connection& connection::operator=(connection&& other) noexcept {
    if (this != &other) {
        cache_.clear();
        sqlite3_close_v2(db_);
        db_ = std::exchange(other.db_, nullptr);
        path_ = std::move(other.path_);
        cache_ = std::move(other.cache_);
    }
    return *this;
}

connection::~connection() {
    cache_.clear();  // statements first: a connection with live statements cannot close
    sqlite3_close_v2(db_);
}

result<connection> connection::open(const std::filesystem::path& path, const connection_options& options) {
    int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_EXRESCODE;
    if (options.create) flags |= SQLITE_OPEN_CREATE;
    sqlite3* raw = nullptr;
    const int code = sqlite3_open_v2(path.c_str(), &raw, flags, nullptr);
    connection db(raw, path);  // owns the handle even when opening failed
    if (code != SQLITE_OK) {
        return make_sqlite_error(raw, code, "opening " + path.string());
    }
    sqlite3_extended_result_codes(raw, 1);
    sqlite3_busy_timeout(raw, static_cast<int>(options.busy_timeout.count()));

    // Pragmas take no bound parameters; these texts are constants. FULL: in WAL mode NORMAL
    // leaves a commit unsynced until the next checkpoint, and a commit that is answered must
    // survive a power cut. Concurrent uploads share commits (ingest::commit_queue), so the
    // sync is paid once per batch.
    if (auto done = db.execute("PRAGMA foreign_keys = ON; PRAGMA synchronous = FULL;"); !done) return done.error();
    if (options.read_only) {
        if (auto done = db.execute("PRAGMA query_only = ON;"); !done) return done.error();
    } else {
        auto mode = db.prepare("PRAGMA journal_mode = WAL;");
        if (!mode) return mode.error();
        auto row = mode->step();
        if (!row) return row.error();
        if (!*row || mode->column_text(0) != "wal") {
            return make_error(error_kind::internal, "catalog database: " + path.string() +
                                                        " could not be switched to WAL mode (the file system "
                                                        "may not support shared memory); put DATA on a local disk");
        }
    }
    return db;
}

result<void> connection::execute(std::string_view sql) {
    const std::string text(sql);  // sqlite3_exec wants a terminated string
    char* message = nullptr;
    const int code = sqlite3_exec(db_, text.c_str(), nullptr, nullptr, &message);
    if (code == SQLITE_OK) return {};
    std::string detail = message != nullptr ? message : sqlite3_errstr(code);
    sqlite3_free(message);
    auto failure = make_sqlite_error(nullptr, code, "running \"" + text.substr(0, 80) + "\"");
    failure.message += " (" + detail + ")";
    return failure;
}

result<statement> connection::prepare(std::string_view sql) {
    sqlite3_stmt* handle = nullptr;
    const int code = sqlite3_prepare_v3(db_, sql.data(), static_cast<int>(sql.size()), SQLITE_PREPARE_PERSISTENT,
                                        &handle, nullptr);
    if (code != SQLITE_OK) {
        sqlite3_finalize(handle);
        return make_sqlite_error(db_, code, "preparing \"" + std::string(sql) + "\"");
    }
    if (handle == nullptr) return make_error(error_kind::internal, "catalog database: empty statement \"" + std::string(sql) + "\"");
    return statement(db_, handle);
}

result<statement_lease> connection::cached(std::string_view sql) {
    auto found = cache_.find(std::string(sql));
    if (found == cache_.end()) {
        auto prepared = prepare(sql);
        if (!prepared) return prepared.error();
        found = cache_.emplace(std::string(sql), std::make_unique<statement>(std::move(prepared).value())).first;
    }
    return statement_lease(*found->second);
}

result<std::int64_t> connection::query_int64(std::string_view sql) {
    auto query = prepare(sql);
    if (!query) return query.error();
    auto row = query->step();
    if (!row) return row.error();
    if (!*row) return make_error(error_kind::internal, "catalog database: \"" + std::string(sql) + "\" returned no row");
    return query->column_int64(0);
}

std::int64_t connection::last_insert_rowid() const noexcept { return sqlite3_last_insert_rowid(db_); }

bool connection::in_transaction() const noexcept { return sqlite3_get_autocommit(db_) == 0; }

}  // namespace wheelhouse::sqlite
