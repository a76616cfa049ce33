#include "wheelhouse/backup/database_copy.hpp"

#include <sqlite3.h>
#include <unistd.h>

#include <charconv>
#include <string>
#include <thread>

#include "wheelhouse/sqlite/connection.hpp"

namespace wheelhouse::backup {
namespace {

// A raw handle for the copy: not sqlite::connection, which would switch it to WAL.
class raw_database {
public:
    raw_database() = default;
    raw_database(const raw_database&) = delete;
    raw_database& operator=(const raw_database&) = delete;
    ~raw_database() { close(); }
    sqlite3** out() noexcept { return &db_; }
    sqlite3* get() const noexcept { return db_; }
    void close() noexcept {
        if (db_ != nullptr) sqlite3_close_v2(db_);
        db_ = nullptr;
    }

private:
    sqlite3* db_ = nullptr;
};

// Runs one pragma that answers rows of text; returns them joined by "; " (at most `limit`).
result<std::string> pragma_text(sqlite3* db, const char* sql, int limit) {
    sqlite3_stmt* statement = nullptr;
    int code = sqlite3_prepare_v2(db, sql, -1, &statement, nullptr);
    if (code != SQLITE_OK) {
        sqlite3_finalize(statement);
        return invalid(std::string("not a readable SQLite database (") + sqlite3_errmsg(db) + ")");
    }
    std::string text;
    int rows = 0;
    while ((code = sqlite3_step(statement)) == SQLITE_ROW) {
        if (rows++ >= limit) continue;
        if (!text.empty()) text += "; ";
        const auto* column = sqlite3_column_text(statement, 0);
        text += column != nullptr ? reinterpret_cast<const char*>(column) : "";
    }
    sqlite3_finalize(statement);
    if (code != SQLITE_DONE) return invalid(std::string("not a readable SQLite database (") + sqlite3_errstr(code) + ")");
    return text;
}

result<void> integrity_check(sqlite3* db, const std::filesystem::path& path) {
    auto findings = pragma_text(db, "PRAGMA integrity_check(10)", 10);
    if (!findings) return invalid(path.string() + " is " + findings.error().message);
    if (*findings != "ok") return invalid(path.string() + " is damaged: " + *findings);
    return {};
}

void remove_database_files(const std::filesystem::path& target_path) {
    for (const char* suffix : {"", "-journal", "-wal", "-shm"}) ::unlink((target_path.string() + suffix).c_str());
}

// SQLite's online backup, a few pages a step, then in one step once writes keep restarting it.
result<void> copy_pages(sqlite3* target, sqlite3* source, const std::filesystem::path& source_path,
                        const database_copy_options& options, database_copy_report& report) {
    sqlite3_backup* copy = sqlite3_backup_init(target, "main", source, "main");
    if (copy == nullptr) return sqlite::make_sqlite_error(target, sqlite3_errcode(target), "starting the backup");
    int last_remaining = -1;
    int pages = options.pages_per_step;
    int code = SQLITE_OK;
    for (;;) {
        code = sqlite3_backup_step(copy, pages);
        ++report.steps;
        const int remaining = sqlite3_backup_remaining(copy);
        // A write by another connection restarts the copy: the pages left grow again.
        if (last_remaining >= 0 && remaining > last_remaining) ++report.restarts;
        last_remaining = remaining;
        if (report.restarts >= options.restarts_before_one_step) pages = -1;
        if (code == SQLITE_DONE) break;
        if (code == SQLITE_OK) continue;
        if (code == SQLITE_BUSY || code == SQLITE_LOCKED) {
            std::this_thread::sleep_for(options.busy_pause);
            continue;
        }
        break;
    }
    report.pages = sqlite3_backup_pagecount(copy);
    const int finished = sqlite3_backup_finish(copy);
    if (code != SQLITE_DONE || finished != SQLITE_OK) {
        return sqlite::make_sqlite_error(target, code != SQLITE_DONE ? code : finished, "copying " + source_path.string());
    }
    return {};
}

// The copy as one self-contained file, checked, with its schema version read.
result<void> seal_copy(sqlite3* target, const std::filesystem::path& target_path, database_copy_report& report) {
    // The copied header says WAL; a backup should be one file that needs no -wal beside it.
    auto mode = pragma_text(target, "PRAGMA journal_mode = DELETE", 1);
    if (!mode || *mode != "delete") {
        return make_error(error_kind::internal,
                          "could not switch the copy " + target_path.string() + " to a rollback journal");
    }
    if (auto checked = integrity_check(target, target_path); !checked) {
        return make_error(error_kind::internal, "the copy came out damaged: " + checked.error().message);
    }
    auto version = pragma_text(target, "PRAGMA user_version", 1);
    if (version) std::from_chars(version->data(), version->data() + version->size(), report.schema_version);
    // Each commit into the copy was synced: synchronous=FULL is the default with a rollback journal.
    return {};
}

// Creates the copy and fills it; the handle is closed on return, so a failed copy's files can go.
result<void> write_copy(const std::filesystem::path& target_path, sqlite3* source,
                        const std::filesystem::path& source_path, const database_copy_options& options,
                        database_copy_report& report) {
    raw_database target;
    // Absent, checked by the caller; it sits in a folder of our own (storage::staging_dir).
    const int opened =
        sqlite3_open_v2(target_path.c_str(), target.out(), SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr);
    if (opened != SQLITE_OK) return sqlite::make_sqlite_error(target.get(), opened, "creating " + target_path.string());
    if (auto copied = copy_pages(target.get(), source, source_path, options, report); !copied) return copied.error();
    return seal_copy(target.get(), target_path, report);
}

}  // namespace

result<database_copy_report> copy_database(const std::filesystem::path& source_path,
                                           const std::filesystem::path& target_path,
                                           const database_copy_options& options) {
    std::error_code failure;
    if (std::filesystem::exists(target_path, failure))
        return invalid(target_path.string() + " already exists; a backup never replaces a file");
    if (!std::filesystem::is_regular_file(source_path, failure))
        return make_error(error_kind::not_found, "no catalog at " + source_path.string());

    auto source = sqlite::connection::open(source_path, {.read_only = true, .create = false});
    if (!source) return source.error();

    database_copy_report report;
    if (auto written = write_copy(target_path, source->handle(), source_path, options, report); !written) {
        remove_database_files(target_path);
        return written.error();
    }
    return report;
}

result<void> check_database(const std::filesystem::path& database) {
    std::error_code failure;
    if (!std::filesystem::is_regular_file(database, failure))
        return make_error(error_kind::not_found, "no database file at " + database.string());
    raw_database db;
    const int opened = sqlite3_open_v2(database.c_str(), db.out(), SQLITE_OPEN_READONLY, nullptr);
    if (opened != SQLITE_OK) return invalid(database.string() + " cannot be opened as a database: " + sqlite3_errstr(opened));
    return integrity_check(db.get(), database);
}

}  // namespace wheelhouse::backup
