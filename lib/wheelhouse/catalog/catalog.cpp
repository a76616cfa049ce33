#include "wheelhouse/catalog/catalog.hpp"

#include <algorithm>
#include <utility>

#include "wheelhouse/catalog/audit.hpp"
#include "wheelhouse/catalog/migrations.hpp"
#include "wheelhouse/catalog/release_variants.hpp"
#include "wheelhouse/catalog/row_columns.hpp"
#include "wheelhouse/sqlite/transaction.hpp"

namespace wheelhouse::catalog {
namespace {

// Whole rows, with the columns row_columns.hpp lists; the statements are made once.
const std::string select_files =
    "SELECT " + file_row_columns() + " FROM files f JOIN projects p ON p.id = f.project_id ";
const std::string file_by_name = select_files + "WHERE f.filename = ?1";
const std::string file_by_sha256_and_name = select_files + "WHERE f.filename = ?1 AND f.sha256 = ?2";
const std::string files_by_project = select_files + "WHERE p.name = ?1 ORDER BY f.filename";
const std::string project_by_name = "SELECT " + project_row_columns() + " FROM projects p WHERE p.name = ?1";
const std::string insert_project = "INSERT INTO projects (created_ms, " + sqlite::column_list(project_columns) +
                                   ") VALUES (?1, " + sqlite::parameter_list(project_columns, 2) + ")";
const std::string insert_file = "INSERT INTO files (project_id, " + sqlite::column_list(file_columns) +
                                ") VALUES (?1, " + sqlite::parameter_list(file_columns, 2) + ")";

// The queries below take the connection to run on, so reads and the writer share them.

// The file row `query` stands on, with its PEP 825 properties.
result<std::optional<file_record>> whole_file(sqlite::connection& db, sqlite::statement& query) {
    auto row = query.step();
    if (!row) return row.error();
    if (!*row) return std::optional<file_record>();
    auto file = read_file_row(query);
    query.reset();
    if (auto read = read_variant_properties(db, file); !read) return read.error();
    return std::optional<file_record>(std::move(file));
}

result<std::optional<file_record>> select_file(sqlite::connection& db, std::string_view filename) {
    auto query = db.cached(file_by_name);
    if (!query) return query.error();
    (*query)->bind_text(1, filename);
    return whole_file(db, **query);
}

result<std::optional<project_record>> select_project(sqlite::connection& db, std::string_view name) {
    auto query = db.cached(project_by_name);
    if (!query) return query.error();
    (*query)->bind_text(1, name);
    auto row = (*query)->step();
    if (!row) return row.error();
    if (!*row) return std::optional<project_record>();
    return std::optional<project_record>(read_project_row(**query));
}

result<std::int64_t> project_id_for(sqlite::connection& db, const new_file& file) {
    auto existing = select_project(db, file.file.project);
    if (!existing) return existing.error();
    if (*existing) return (*existing)->id;
    auto insert = db.cached(insert_project);
    if (!insert) return insert.error();
    project_record project;
    project.name = file.file.project;
    project.display_name = file.project_display_name.empty() ? file.file.project : file.project_display_name;
    (*insert)->bind_int64(1, now_ms());
    sqlite::bind_columns(**insert, 2, project_columns, project);
    if (auto done = (*insert)->run(); !done) return done.error();
    return db.last_insert_rowid();
}

result<void> insert_file_row(sqlite::connection& db, std::int64_t project_id, const file_record& file) {
    auto insert = db.cached(insert_file);
    if (!insert) return insert.error();
    (*insert)->bind_int64(1, project_id);
    sqlite::bind_columns(**insert, 2, file_columns, file);
    return (*insert)->run();
}

error no_such_file(std::string_view filename) {
    return make_error(error_kind::not_found, "no file named " + std::string(filename) + " in the catalog");
}

}  // namespace

// A reader connection on loan; goes back to the pool when the lease ends.
class catalog::reader_lease {
public:
    reader_lease(const catalog& owner, std::unique_ptr<sqlite::connection> db) noexcept
        : owner_(&owner), db_(std::move(db)) {}
    reader_lease(reader_lease&& other) noexcept : owner_(other.owner_), db_(std::move(other.db_)) {}
    reader_lease& operator=(reader_lease&&) = delete;
    ~reader_lease() {
        if (db_) owner_->give_back(std::move(db_));
    }
    sqlite::connection& operator*() const noexcept { return *db_; }
    sqlite::connection* operator->() const noexcept { return db_.get(); }

private:
    const catalog* owner_;
    std::unique_ptr<sqlite::connection> db_;
};

catalog::catalog(std::filesystem::path path, sqlite::connection writer, const options& settings)
    : path_(std::move(path)), options_(settings), writer_(std::move(writer)) {}

catalog::~catalog() = default;

result<std::unique_ptr<catalog>> catalog::open(const std::filesystem::path& database, const options& settings) {
    std::error_code failure;
    if (database.has_parent_path()) std::filesystem::create_directories(database.parent_path(), failure);
    if (failure) {
        return make_error(error_kind::internal, "creating " + database.parent_path().string() + ": " + failure.message());
    }
    auto writer = sqlite::connection::open(database, {.read_only = false, .create = true, .busy_timeout = settings.busy_timeout});
    if (!writer) return writer.error();
    if (auto migrated = migrate(*writer); !migrated) return migrated.error();
    auto version = writer->query_int64("PRAGMA data_version");
    if (!version) return version.error();
    std::unique_ptr<catalog> opened(new catalog(database, std::move(writer).value(), settings));
    opened->data_version_ = *version;
    return opened;
}

result<catalog::reader_lease> catalog::borrow_reader() const {
    {
        std::lock_guard lock(readers_mutex_);
        if (!idle_readers_.empty()) {
            auto reader = std::move(idle_readers_.back());
            idle_readers_.pop_back();
            return reader_lease(*this, std::move(reader));
        }
    }
    auto reader = sqlite::connection::open(path_, {.read_only = true, .create = false, .busy_timeout = options_.busy_timeout});
    if (!reader) return reader.error();
    return reader_lease(*this, std::make_unique<sqlite::connection>(std::move(reader).value()));
}

void catalog::give_back(std::unique_ptr<sqlite::connection> reader) const {
    std::lock_guard lock(readers_mutex_);
    if (idle_readers_.size() < options_.max_idle_readers) idle_readers_.push_back(std::move(reader));
}

result<std::vector<project_listing>> catalog::list_projects(const project_filter& visible) const {
    auto reader = borrow_reader();
    if (!reader) return reader.error();
    return read_project_list(**reader, visible);
}

result<std::vector<project_listing>> read_project_list(sqlite::connection& db, const project_filter& visible) {
    static const std::string list =
        "SELECT " + project_row_columns() + ", count(f.id), coalesce(max(f.upload_time_ms), 0) "
        "FROM projects p LEFT JOIN files f ON f.project_id = p.id WHERE " +
        visible_project_condition("p.name", 1) + " GROUP BY p.id ORDER BY p.name";
    auto query = db.cached(list);
    if (!query) return query.error();
    bind_project_filter(**query, 1, visible);
    std::vector<project_listing> projects;
    for (;;) {
        auto row = (*query)->step();
        if (!row) return row.error();
        if (!*row) break;
        const auto& listed = **query;
        projects.push_back({read_project_row(listed), listed.column_int64(project_row_width),
                            listed.column_int64(project_row_width + 1)});
    }
    return projects;
}

result<std::optional<project_record>> catalog::find_project(std::string_view name) const {
    auto reader = borrow_reader();
    if (!reader) return reader.error();
    return select_project(**reader, name);
}

result<std::optional<project_files>> catalog::files_of_project(std::string_view name) const {
    std::optional<project_files> found;
    // One snapshot for the project and its files, so a page never shows half a write.
    auto read = read_snapshot([&](sqlite::connection& db) -> result<void> {
        auto files = read_project_files(db, name);
        if (!files) return files.error();
        found = std::move(*files);
        return {};
    });
    if (!read) return read.error();
    return found;
}

result<std::optional<project_files>> read_project_files(sqlite::connection& db, std::string_view name) {
    auto project = select_project(db, name);
    if (!project) return project.error();
    if (!*project) return std::optional<project_files>();
    project_files found{std::move(**project), {}, {}};
    auto query = db.cached(files_by_project);
    if (!query) return query.error();
    (*query)->bind_text(1, name);
    for (;;) {
        auto row = (*query)->step();
        if (!row) return row.error();
        if (!*row) break;
        found.files.push_back(read_file_row(**query));
    }
    for (auto& file : found.files) {
        if (auto read = read_variant_properties(db, file); !read) return read.error();
    }
    auto release_files = read_release_variants(db, name);
    if (!release_files) return release_files.error();
    found.release_variants = std::move(*release_files);
    return std::optional<project_files>(std::move(found));
}

result<std::optional<file_record>> catalog::find_file(std::string_view filename) const {
    auto reader = borrow_reader();
    if (!reader) return reader.error();
    return select_file(**reader, filename);
}

result<std::optional<file_record>> catalog::find_file(std::string_view sha256, std::string_view filename) const {
    auto reader = borrow_reader();
    if (!reader) return reader.error();
    auto query = (*reader)->cached(file_by_sha256_and_name);
    if (!query) return query.error();
    (*query)->bind_text(1, filename).bind_text(2, sha256);
    return whole_file(**reader, **query);
}

result<std::optional<std::string>> catalog::provenance_of(std::string_view filename) const {
    auto reader = borrow_reader();
    if (!reader) return reader.error();
    auto query = (*reader)->cached(
        "SELECT p.provenance FROM file_provenance p JOIN files f ON f.id = p.file_id WHERE f.filename = ?1");
    if (!query) return query.error();
    (*query)->bind_text(1, filename);
    auto row = (*query)->step();
    if (!row) return row.error();
    if (!*row) return std::optional<std::string>();
    return std::optional<std::string>((*query)->column_text(0));
}

result<std::optional<release_variants_file>> catalog::find_release_variants(std::string_view sha256,
                                                                            std::string_view filename) const {
    auto reader = borrow_reader();
    if (!reader) return reader.error();
    return wheelhouse::catalog::find_release_variants(**reader, sha256, filename);
}

result<bool> catalog::references_blob(std::string_view sha256) const {
    auto reader = borrow_reader();
    if (!reader) return reader.error();
    auto query = (*reader)->cached("SELECT EXISTS (SELECT 1 FROM blob_rows WHERE sha256 = ?1)");
    if (!query) return query.error();
    (*query)->bind_text(1, sha256);
    auto row = (*query)->step();
    if (!row) return row.error();
    return (*query)->column_bool(0);
}

result<add_result> add_file_in_transaction(sqlite::connection& db, const new_file& file,
                                           const std::function<result<void>()>& before_insert) {
    // Decided under the write lock, so two adds of one filename end with exactly one row.
    auto existing = select_file(db, file.file.filename);
    if (!existing) return existing.error();
    if (*existing) {
        const bool same = (*existing)->sha256 == file.file.sha256;
        return add_result{same ? add_outcome::identical : add_outcome::conflict, std::move(**existing)};
    }
    auto project_id = project_id_for(db, file);
    if (!project_id) return project_id.error();
    if (auto fits = check_variant_fits(db, *project_id, file.file); !fits) return fits.error();
    if (before_insert) {
        if (auto ready = before_insert(); !ready) return ready.error();
    }
    add_result added;
    added.file = file.file;
    added.file.attested = !file.provenance.empty();
    if (added.file.upload_time_ms == 0) added.file.upload_time_ms = now_ms();
    if (auto inserted = insert_file_row(db, *project_id, added.file); !inserted) return inserted.error();
    added.file.id = db.last_insert_rowid();
    if (added.file.attested) {
        auto keep = db.cached("INSERT INTO file_provenance (file_id, provenance) VALUES (?1, ?2)");
        if (!keep) return keep.error();
        (*keep)->bind_int64(1, added.file.id).bind_text(2, file.provenance);
        if (auto kept = (*keep)->run(); !kept) return kept.error();
    }
    if (auto written = write_variant_properties(db, added.file); !written) return written.error();
    if (added.file.variant_label) {
        auto rewritten = rewrite_release_variants(db, *project_id, added.file.project, added.file.normalized_version);
        if (!rewritten) return rewritten.error();
    }
    if (auto audited = write_audit(db, file.file.uploaded_by.value_or("cli"), "add_file", file.file.filename,
                                   file.file.sha256);
        !audited) {
        return audited.error();
    }
    return added;
}

result<add_result> catalog::add_file(const new_file& file, const std::function<result<void>()>& before_insert) {
    std::optional<add_result> added;
    const batched_write write{[&](sqlite::connection& db) -> result<std::string> {
        auto done = add_file_in_transaction(db, file, before_insert);
        if (!done) return done.error();
        added = std::move(*done);
        return added->outcome == add_outcome::created ? added->file.project : std::string();
    }};
    auto outcome = std::move(write_batch(std::span(&write, 1)).front());
    if (!outcome) return outcome.error();
    return std::move(*added);
}

std::vector<result<void>> catalog::write_batch(std::span<const batched_write> writes) {
    std::vector<result<void>> outcomes(writes.size());
    std::vector<std::string> changed;
    {
        std::lock_guard lock(writer_mutex_);
        auto fail_all = [&](const error& failure) {
            for (auto& outcome : outcomes) outcome = failure;
        };
        auto transaction = sqlite::transaction::begin(writer_, sqlite::transaction_mode::immediate);
        if (!transaction) {
            fail_all(transaction.error());
            return outcomes;
        }
        for (std::size_t i = 0; i < writes.size(); ++i) {
            auto written = run_in_savepoint(writes[i]);
            if (!written && !writer_.in_transaction()) {
                // SQLite rolled the whole transaction back (a full disk, an I/O error): the
                // writes before this one are gone too.
                fail_all(written.error());
                return outcomes;
            }
            if (!written) outcomes[i] = written.error();
            else if (!written->empty()) changed.push_back(std::move(*written));
        }
        if (auto committed = transaction->commit(); !committed) {
            fail_all(committed.error());
            return outcomes;
        }
    }
    std::sort(changed.begin(), changed.end());
    changed.erase(std::unique(changed.begin(), changed.end()), changed.end());
    for (const auto& project : changed) notify(project);
    return outcomes;
}

result<std::string> catalog::run_in_savepoint(const batched_write& write) {
    auto savepoint = sqlite::savepoint::begin(writer_);
    if (!savepoint) return savepoint.error();
    auto written = write.work(writer_);
    if (!written) return written.error();  // the savepoint's destructor undoes its changes
    if (auto released = savepoint->release(); !released) return released.error();
    return written;
}

result<file_record> catalog::yank(std::string_view filename, std::string_view reason, std::string_view actor) {
    file_record changed;
    {
        std::lock_guard lock(writer_mutex_);
        auto transaction = sqlite::transaction::begin(writer_, sqlite::transaction_mode::immediate);
        if (!transaction) return transaction.error();
        auto update = writer_.cached("UPDATE files SET yanked_reason = ?2 WHERE filename = ?1");
        if (!update) return update.error();
        (*update)->bind_text(1, filename).bind_text(2, reason);
        if (auto done = (*update)->run(); !done) return done.error();
        auto row = select_file(writer_, filename);
        if (!row) return row.error();
        if (!*row) return no_such_file(filename);
        if (auto audited = write_audit(writer_, actor, "yank", filename, std::string(reason)); !audited) return audited.error();
        if (auto committed = transaction->commit(); !committed) return committed.error();
        changed = std::move(**row);
    }
    notify(changed.project);
    return changed;
}

result<file_record> catalog::unyank(std::string_view filename, std::string_view actor,
                                   const std::optional<std::string>& reason) {
    file_record changed;
    {
        std::lock_guard lock(writer_mutex_);
        auto transaction = sqlite::transaction::begin(writer_, sqlite::transaction_mode::immediate);
        if (!transaction) return transaction.error();
        auto update = writer_.cached("UPDATE files SET yanked_reason = NULL WHERE filename = ?1");
        if (!update) return update.error();
        (*update)->bind_text(1, filename);
        if (auto done = (*update)->run(); !done) return done.error();
        auto row = select_file(writer_, filename);
        if (!row) return row.error();
        if (!*row) return no_such_file(filename);
        if (auto audited = write_audit(writer_, actor, "unyank", filename, reason); !audited) return audited.error();
        if (auto committed = transaction->commit(); !committed) return committed.error();
        changed = std::move(**row);
    }
    notify(changed.project);
    return changed;
}

result<file_record> catalog::delete_file(std::string_view filename, std::string_view actor) {
    file_record removed;
    {
        std::lock_guard lock(writer_mutex_);
        auto transaction = sqlite::transaction::begin(writer_, sqlite::transaction_mode::immediate);
        if (!transaction) return transaction.error();
        auto row = select_file(writer_, filename);
        if (!row) return row.error();
        if (!*row) return no_such_file(filename);
        auto remove = writer_.cached("DELETE FROM files WHERE id = ?1");
        if (!remove) return remove.error();
        (*remove)->bind_int64(1, (*row)->id);
        if (auto done = (*remove)->run(); !done) return done.error();
        if ((*row)->variant_label) {
            auto project = select_project(writer_, (*row)->project);
            if (!project) return project.error();
            if (*project) {
                auto rewritten = rewrite_release_variants(writer_, (*project)->id, (*row)->project,
                                                          (*row)->normalized_version);
                if (!rewritten) return rewritten.error();
            }
        }
        if (auto audited = write_audit(writer_, actor, "delete_file", filename, (*row)->sha256); !audited) {
            return audited.error();
        }
        if (auto committed = transaction->commit(); !committed) return committed.error();
        removed = std::move(**row);
    }
    notify(removed.project);
    return removed;
}

result<project_record> catalog::set_project_status(std::string_view name, project_status status,
                                                   std::optional<std::string> reason, std::string_view actor) {
    project_record changed;
    {
        std::lock_guard lock(writer_mutex_);
        auto transaction = sqlite::transaction::begin(writer_, sqlite::transaction_mode::immediate);
        if (!transaction) return transaction.error();
        auto update = writer_.cached("UPDATE projects SET status = ?2, status_reason = ?3 WHERE name = ?1");
        if (!update) return update.error();
        (*update)->bind_text(1, name).bind_text(2, to_string(status)).bind_optional_text(3, reason);
        if (auto done = (*update)->run(); !done) return done.error();
        auto row = select_project(writer_, name);
        if (!row) return row.error();
        if (!*row) return make_error(error_kind::not_found, "no project named " + std::string(name) + " in the catalog");
        std::string detail(to_string(status));
        if (reason) detail += ": " + *reason;
        if (auto audited = write_audit(writer_, actor, "set_status", name, detail); !audited) {
            return audited.error();
        }
        if (auto committed = transaction->commit(); !committed) return committed.error();
        changed = std::move(**row);
    }
    notify(changed.name);
    return changed;
}

result<bool> catalog::release_blob(std::string_view sha256, const std::function<result<void>()>& remove) {
    std::lock_guard lock(writer_mutex_);
    // The write lock, held while checking and removing, keeps any add_file of these bytes out.
    auto transaction = sqlite::transaction::begin(writer_, sqlite::transaction_mode::immediate);
    if (!transaction) return transaction.error();
    auto query = writer_.cached("SELECT EXISTS (SELECT 1 FROM blob_rows WHERE sha256 = ?1)");
    if (!query) return query.error();
    (*query)->bind_text(1, sha256);
    auto row = (*query)->step();
    if (!row) return row.error();
    if ((*query)->column_bool(0)) return false;
    if (auto removed = remove(); !removed) return removed.error();
    if (auto committed = transaction->commit(); !committed) return committed.error();
    return true;
}

result<void> catalog::write_transaction(const std::function<result<void>(sqlite::connection&)>& work) {
    std::lock_guard lock(writer_mutex_);
    auto transaction = sqlite::transaction::begin(writer_, sqlite::transaction_mode::immediate);
    if (!transaction) return transaction.error();
    if (auto done = work(writer_); !done) return done.error();
    return transaction->commit();
}

result<void> catalog::read_snapshot(const std::function<result<void>(sqlite::connection&)>& work) const {
    auto reader = borrow_reader();
    if (!reader) return reader.error();
    // Without a transaction each statement would read its own snapshot. It only reads, so
    // ending it by rollback (the destructor's) is all the ending it needs.
    auto snapshot = sqlite::transaction::begin(**reader, sqlite::transaction_mode::deferred);
    if (!snapshot) return snapshot.error();
    return work(**reader);
}

void catalog::subscribe(change_listener listener) {
    std::lock_guard lock(listeners_mutex_);
    listeners_.push_back(std::make_shared<const change_listener>(std::move(listener)));
}

void catalog::notify(std::string_view project) {
    std::vector<std::shared_ptr<const change_listener>> listeners;
    {
        std::lock_guard lock(listeners_mutex_);
        listeners = listeners_;
    }
    for (const auto& listener : listeners) (*listener)(project);
}

bool catalog::changed_externally() {
    const auto seen = external_changes();
    if (!seen) return false;
    return changes_told_.exchange(*seen) != *seen;
}

std::optional<std::uint64_t> catalog::external_changes() {
    // Asked from I/O threads, which must never wait for a commit: a batch holds the writer
    // through its sync, or for the busy timeout while another process holds the write lock
    // (the I/O thread then stalled, and with it every connection it served). The writer's
    // data_version moves only for other connections' commits, never for this process's own.
    std::unique_lock lock(writer_mutex_, std::try_to_lock);
    if (!lock.owns_lock()) return std::nullopt;
    auto query = writer_.cached("PRAGMA data_version");
    std::optional<std::int64_t> version;
    if (query) {
        if (auto row = (*query)->step(); row && *row) version = (*query)->column_int64(0);
    }
    // Cannot tell: count a change, a re-read is harmless.
    if (!version || *version != data_version_) ++external_changes_;
    if (version) data_version_ = *version;
    return external_changes_;
}

}  // namespace wheelhouse::catalog
