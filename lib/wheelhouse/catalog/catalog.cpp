#include "wheelhouse/catalog/catalog.hpp"

#include <boost/json.hpp>

#include <algorithm>
#include <utility>

#include "wheelhouse/catalog/audit.hpp"
#include "wheelhouse/catalog/migrations.hpp"
#include "wheelhouse/catalog/release_variants.hpp"
#include "wheelhouse/sqlite/transaction.hpp"

namespace wheelhouse::catalog {
namespace {

// The columns of a file_record, in the order read_file_row reads them.
constexpr std::string_view select_files =
    "SELECT f.id, p.name, f.filename, f.version, f.normalized_version, f.local_label, f.python_tag, f.abi_tag, "
    "f.platform_tag, f.build_tag, f.cuda, f.sm, f.torch, f.torch_and_higher, f.cxx11abi, f.rocm, f.cpu, f.xpu, "
    "f.git_hash, f.build_date, f.variant_unparsed, f.sha256, f.size, f.requires_python, f.summary, "
    "f.upload_time_ms, f.yanked_reason, f.download_mode, f.remote_url, f.metadata_sha256, f.metadata_size, "
    "f.uploaded_by, f.fetch_url, f.variant_label, f.variant_properties, f.variant_namespaces, f.packagetype "
    "FROM files f JOIN projects p ON p.id = f.project_id ";

const std::string file_by_name = std::string(select_files) + "WHERE f.filename = ?1";
const std::string file_by_sha256_and_name = std::string(select_files) + "WHERE f.filename = ?1 AND f.sha256 = ?2";
const std::string files_by_project = std::string(select_files) + "WHERE p.name = ?1 ORDER BY f.filename";

constexpr std::string_view project_by_name =
    "SELECT id, name, display_name, status, status_reason FROM projects WHERE name = ?1";


std::optional<std::string> unparsed_to_json(const std::vector<std::string>& pieces) {
    if (pieces.empty()) return std::nullopt;
    boost::json::array array;
    for (const auto& piece : pieces) array.emplace_back(piece);
    return boost::json::serialize(array);
}

std::vector<std::string> unparsed_from_json(const std::optional<std::string>& text) {
    std::vector<std::string> pieces;
    if (!text) return pieces;
    boost::system::error_code failure;
    const auto value = boost::json::parse(*text, failure);
    if (failure || !value.is_array()) return {*text};  // keep what is there rather than lose it
    for (const auto& piece : value.as_array()) {
        if (piece.is_string()) pieces.emplace_back(piece.as_string());
    }
    return pieces;
}

file_record read_file_row(const sqlite::statement& row) {
    file_record file;
    file.id = row.column_int64(0);
    file.project = row.column_text(1);
    file.filename = row.column_text(2);
    file.version = row.column_text(3);
    file.normalized_version = row.column_text(4);
    file.local_label = row.column_text(5);
    file.python_tag = row.column_text(6);
    file.abi_tag = row.column_text(7);
    file.platform_tag = row.column_text(8);
    file.build_tag = row.column_optional_text(9);
    file.variant.cuda = row.column_optional_text(10);
    file.variant.sm = row.column_optional_text(11);
    file.variant.torch = row.column_optional_text(12);
    file.variant.torch_and_higher = row.column_bool(13);
    if (!row.column_is_null(14)) file.variant.cxx11abi = row.column_bool(14);
    file.variant.rocm = row.column_optional_text(15);
    file.variant.cpu = row.column_bool(16);
    file.variant.xpu = row.column_bool(17);
    file.variant.git_hash = row.column_optional_text(18);
    file.variant.build_date = row.column_optional_text(19);
    file.variant.unparsed = unparsed_from_json(row.column_optional_text(20));
    file.sha256 = row.column_text(21);
    file.size = static_cast<std::uint64_t>(row.column_int64(22));
    file.requires_python = row.column_optional_text(23);
    file.summary = row.column_optional_text(24);
    file.upload_time_ms = row.column_int64(25);
    file.yanked_reason = row.column_optional_text(26);
    file.mode = parse_download_mode(row.column_text(27)).value_or(download_mode::local);
    file.remote_url = row.column_optional_text(28);
    file.metadata_sha256 = row.column_text(29);
    file.metadata_size = static_cast<std::uint64_t>(row.column_int64(30));
    file.uploaded_by = row.column_optional_text(31);
    file.fetch_url = row.column_optional_text(32);
    file.variant_label = row.column_optional_text(33);
    file.variant_properties = row.column_text(34);
    file.variant_namespaces = row.column_text(35);
    file.type = parse_package_type(row.column_text(36)).value_or(package_type::wheel);
    return file;
}

project_record read_project_row(const sqlite::statement& row) {
    project_record project;
    project.id = row.column_int64(0);
    project.name = row.column_text(1);
    project.display_name = row.column_text(2);
    project.status = parse_project_status(row.column_text(3)).value_or(project_status::active);
    project.status_reason = row.column_optional_text(4);
    return project;
}

// The queries below take the connection to run on, so reads and the writer share them.

result<std::optional<file_record>> select_file(sqlite::connection& db, std::string_view filename) {
    auto query = db.cached(file_by_name);
    if (!query) return query.error();
    (*query)->bind_text(1, filename);
    auto row = (*query)->step();
    if (!row) return row.error();
    if (!*row) return std::optional<file_record>();
    return std::optional<file_record>(read_file_row(**query));
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
    auto insert = db.cached("INSERT INTO projects (name, display_name, created_ms) VALUES (?1, ?2, ?3)");
    if (!insert) return insert.error();
    const std::string& display = file.project_display_name.empty() ? file.file.project : file.project_display_name;
    (*insert)->bind_text(1, file.file.project).bind_text(2, display).bind_int64(3, now_ms());
    if (auto done = (*insert)->run(); !done) return done.error();
    return db.last_insert_rowid();
}

result<void> insert_file(sqlite::connection& db, std::int64_t project_id, const file_record& file) {
    auto insert = db.cached(
        "INSERT INTO files (project_id, filename, version, normalized_version, local_label, python_tag, abi_tag, "
        "platform_tag, build_tag, cuda, sm, torch, torch_and_higher, cxx11abi, rocm, cpu, xpu, git_hash, build_date, "
        "variant_unparsed, sha256, size, requires_python, summary, upload_time_ms, yanked_reason, download_mode, "
        "remote_url, metadata_sha256, metadata_size, uploaded_by, fetch_url, variant_label, variant_properties, "
        "variant_namespaces, packagetype) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, "
        "?16, ?17, ?18, ?19, ?20, ?21, ?22, ?23, ?24, ?25, ?26, ?27, ?28, ?29, ?30, ?31, ?32, ?33, ?34, ?35, ?36)");
    if (!insert) return insert.error();
    auto& statement = **insert;
    const auto& variant = file.variant;
    statement.bind_int64(1, project_id)
        .bind_text(2, file.filename)
        .bind_text(3, file.version)
        .bind_text(4, file.normalized_version)
        .bind_text(5, file.local_label)
        .bind_text(6, file.python_tag)
        .bind_text(7, file.abi_tag)
        .bind_text(8, file.platform_tag)
        .bind_optional_text(9, file.build_tag)
        .bind_optional_text(10, variant.cuda)
        .bind_optional_text(11, variant.sm)
        .bind_optional_text(12, variant.torch)
        .bind_bool(13, variant.torch_and_higher)
        .bind_optional_int64(14, variant.cxx11abi ? std::optional<std::int64_t>(*variant.cxx11abi ? 1 : 0) : std::nullopt)
        .bind_optional_text(15, variant.rocm)
        .bind_bool(16, variant.cpu)
        .bind_bool(17, variant.xpu)
        .bind_optional_text(18, variant.git_hash)
        .bind_optional_text(19, variant.build_date)
        .bind_optional_text(20, unparsed_to_json(variant.unparsed))
        .bind_text(21, file.sha256)
        .bind_int64(22, static_cast<std::int64_t>(file.size))
        .bind_optional_text(23, file.requires_python)
        .bind_optional_text(24, file.summary)
        .bind_int64(25, file.upload_time_ms)
        .bind_optional_text(26, file.yanked_reason)
        .bind_text(27, to_string(file.mode))
        .bind_optional_text(28, file.remote_url)
        .bind_text(29, file.metadata_sha256)
        .bind_int64(30, static_cast<std::int64_t>(file.metadata_size))
        .bind_optional_text(31, file.uploaded_by)
        .bind_optional_text(32, file.fetch_url)
        .bind_optional_text(33, file.variant_label)
        .bind_text(34, file.variant_properties)
        .bind_text(35, file.variant_namespaces)
        .bind_text(36, to_string(file.type));
    return statement.run();
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
        "SELECT p.id, p.name, p.display_name, p.status, p.status_reason, count(f.id), coalesce(max(f.upload_time_ms), 0) "
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
        projects.push_back({read_project_row(**query), (*query)->column_int64(5), (*query)->column_int64(6)});
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
    auto row = (*query)->step();
    if (!row) return row.error();
    if (!*row) return std::optional<file_record>();
    return std::optional<file_record>(read_file_row(**query));
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
    auto query = (*reader)->cached("SELECT EXISTS (SELECT 1 FROM files WHERE sha256 = ?1)");
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
    if (added.file.upload_time_ms == 0) added.file.upload_time_ms = now_ms();
    if (auto inserted = insert_file(db, *project_id, added.file); !inserted) return inserted.error();
    added.file.id = db.last_insert_rowid();
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
    auto query = writer_.cached("SELECT EXISTS (SELECT 1 FROM files WHERE sha256 = ?1)");
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
