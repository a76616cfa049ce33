#pragma once
// The catalog: projects and their files in DATA/catalog.db (SQLite, WAL).
//
// Thread safety: every member may be called from any thread at the same time.
//  - Writes are serialised on one writer connection behind a mutex, each in a BEGIN IMMEDIATE
//    transaction, which also serialises them with other processes (the `ingest` command).
//  - Reads borrow a reader connection from a small pool; a connection is used by one thread at
//    a time. Each read is one snapshot. Reads never wait for writes (WAL).
//  - Change listeners run on the thread that made the write, after its commit, with no lock of
//    the catalog held: a listener may read the catalog, but must not block for long.

#include <atomic>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "wheelhouse/catalog/project_filter.hpp"
#include "wheelhouse/catalog/records.hpp"
#include "wheelhouse/result.hpp"
#include "wheelhouse/sqlite/connection.hpp"

namespace wheelhouse::catalog {

// A row of the /simple/ index.
struct project_listing {
    project_record project;
    std::int64_t file_count = 0;
    std::int64_t last_upload_ms = 0;  // 0 without files
};

// One project and every file of it, read in one snapshot; files ordered by filename, and the
// PEP 825 variants.json of each release with variant wheels.
struct project_files {
    project_record project;
    std::vector<file_record> files;
    std::vector<release_variants_file> release_variants;
};

struct new_file {
    file_record file;                  // id is ignored; upload_time_ms 0 means now
    std::string project_display_name;  // names the project when this file creates it
    // PEP 740's provenance object (JSON) of the attestations the upload carried and that
    // verified; kept only when this add creates the row. "" for none.
    std::string provenance;
};

enum class add_outcome {
    created,    // a new row
    identical,  // the same filename with the same sha256 is already there: nothing changed
    conflict,   // the filename is taken by other bytes: nothing changed ("File already exists")
};

struct add_result {
    add_outcome outcome = add_outcome::created;
    file_record file;  // the new row, or the row that was already there
};

// One write of a batch (catalog::write_batch). `work` runs on the writer connection inside the
// batch's transaction and returns the normalised name of the project whose pages it changed,
// or "" for none.
struct batched_write {
    std::function<result<std::string>(sqlite::connection&)> work;
};

class catalog {
public:
    struct options {
        std::chrono::milliseconds busy_timeout{10'000};
        std::size_t max_idle_readers = 16;  // connections kept open for reuse
    };

    // Opens (creating when missing) the database and brings its schema up to date.
    static result<std::unique_ptr<catalog>> open(const std::filesystem::path& database, const options& settings);
    static result<std::unique_ptr<catalog>> open(const std::filesystem::path& database) { return open(database, options{}); }

    catalog(const catalog&) = delete;
    catalog& operator=(const catalog&) = delete;
    ~catalog();

    // ---- reads ----
    // Every project `visible` shows, with its file count, ordered by name (for /simple/).
    result<std::vector<project_listing>> list_projects(const project_filter& visible = {}) const;
    // By PEP 503 normalised name.
    result<std::optional<project_record>> find_project(std::string_view name) const;
    result<std::optional<project_files>> files_of_project(std::string_view name) const;
    result<std::optional<file_record>> find_file(std::string_view filename) const;
    // For /files/<sha256>/<filename>: both must match.
    result<std::optional<file_record>> find_file(std::string_view sha256, std::string_view filename) const;
    // PEP 825: a release's generated variants.json, for /files/<sha256>/<filename>; both must match.
    result<std::optional<release_variants_file>> find_release_variants(std::string_view sha256,
                                                                       std::string_view filename) const;
    // PEP 740: the provenance object kept for the file `filename`; nullopt when it has none.
    result<std::optional<std::string>> provenance_of(std::string_view filename) const;
    // True when some row's bytes are the blob `sha256`.
    result<bool> references_blob(std::string_view sha256) const;

    // ---- writes ----
    // Adds a file, creating its project on first use. `before_insert`, when given, runs inside
    // the write transaction just before a new row is inserted (not for identical or conflict);
    // an error from it aborts the add and is returned. The ingester uses it to make sure the
    // blob is in place while no other writer can remove it.
    result<add_result> add_file(const new_file& file, const std::function<result<void>()>& before_insert = {});

    // Runs `writes` in one BEGIN IMMEDIATE transaction, each in a savepoint of its own, and
    // commits once: one sync for all of them. Returns each write's outcome, in order: its own
    // error (its changes undone, the others' kept), or the commit's error (nothing kept), or
    // success. A later write sees the earlier ones' rows. Listeners are told after the commit.
    // Runs on the calling thread; see ingest::commit_queue for the thread that batches uploads.
    std::vector<result<void>> write_batch(std::span<const batched_write> writes);

    // PEP 592. `actor` goes to the audit log. not_found when there is no such file.
    result<file_record> yank(std::string_view filename, std::string_view reason, std::string_view actor);
    // `reason`, when given, goes to the audit log beside the un-yank.
    result<file_record> unyank(std::string_view filename, std::string_view actor,
                               const std::optional<std::string>& reason = std::nullopt);
    // Removes the row and returns it; the caller then release_blob()s its sha256.
    result<file_record> delete_file(std::string_view filename, std::string_view actor);
    // PEP 792. not_found when there is no such project.
    result<project_record> set_project_status(std::string_view name, project_status status,
                                              std::optional<std::string> reason, std::string_view actor);

    // Runs `remove` inside a write transaction if, and only if, no row references `sha256`;
    // returns whether it ran. Blob removal goes through here so that it can never race an
    // add_file of the same bytes, in this process or another.
    result<bool> release_blob(std::string_view sha256, const std::function<result<void>()>& remove);

    // ---- tables of other components in the same database (tokens) ----
    // Runs `work` inside a BEGIN IMMEDIATE transaction on the writer connection and commits if
    // it succeeds. No change listener is told: these tables back no page.
    result<void> write_transaction(const std::function<result<void>(sqlite::connection&)>& work);
    // Runs `work` on a reader connection inside one read transaction: every read it makes sees
    // the same snapshot, whatever is written meanwhile. A long one keeps the WAL from being
    // checkpointed past it until it ends.
    result<void> read_snapshot(const std::function<result<void>(sqlite::connection&)>& work) const;

    // ---- change notification ----
    using change_listener = std::function<void(std::string_view project)>;
    // Called after each committed write with the normalised name of the project it changed.
    void subscribe(change_listener listener);
    // True once after another connection (another process: `wheelhouse ingest`) committed a
    // write since the last call. Cheap: one PRAGMA data_version on the writer connection, and
    // it never waits: while a write holds the writer it answers false, to be asked again.
    bool changed_externally();
    // How many commits of other connections the writer has noticed since open (a count that
    // grows whenever a check finds one or more), checked now; nullopt while a write holds the
    // writer, for the same reason: the caller reads the database instead, or asks again.
    // Thread safety: any thread; never waits.
    std::optional<std::uint64_t> external_changes();

    const std::filesystem::path& path() const noexcept { return path_; }

private:
    class reader_lease;
    catalog(std::filesystem::path path, sqlite::connection writer, const options& settings);
    result<reader_lease> borrow_reader() const;
    void give_back(std::unique_ptr<sqlite::connection> reader) const;
    void notify(std::string_view project);
    result<std::string> run_in_savepoint(const batched_write& write);  // under writer_mutex_

    std::filesystem::path path_;
    options options_;

    std::mutex writer_mutex_;
    sqlite::connection writer_;
    std::int64_t data_version_ = 0;  // last seen on writer_, under writer_mutex_
    std::uint64_t external_changes_ = 0;  // under writer_mutex_
    std::atomic<std::uint64_t> changes_told_{0};  // external_changes_ as changed_externally() last told it

    mutable std::mutex readers_mutex_;
    mutable std::vector<std::unique_ptr<sqlite::connection>> idle_readers_;

    std::mutex listeners_mutex_;
    std::vector<std::shared_ptr<const change_listener>> listeners_;
};

// list_projects() and files_of_project() on a connection that read_snapshot() lends, so that
// several of them see one snapshot (`wheelhouse export` reads the whole catalog so).
result<std::vector<project_listing>> read_project_list(sqlite::connection& db, const project_filter& visible = {});
result<std::optional<project_files>> read_project_files(sqlite::connection& db, std::string_view name);

// add_file's work on the writer connection that write_batch lends, inside its transaction.
result<add_result> add_file_in_transaction(sqlite::connection& db, const new_file& file,
                                           const std::function<result<void>()>& before_insert = {});

}  // namespace wheelhouse::catalog
