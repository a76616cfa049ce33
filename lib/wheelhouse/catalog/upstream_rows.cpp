#include "wheelhouse/catalog/upstream_rows.hpp"

#include "wheelhouse/catalog/audit.hpp"
#include "wheelhouse/catalog/row_columns.hpp"

namespace wheelhouse::catalog {
namespace {

const std::string select_reservations =
    "SELECT " + sqlite::column_list(reservation_columns) + " FROM reserved_names ORDER BY pattern";
const std::string insert_reservation = "INSERT INTO reserved_names (" + sqlite::column_list(reservation_columns) +
                                       ") VALUES (" + sqlite::parameter_list(reservation_columns, 1) +
                                       ") ON CONFLICT (pattern) DO NOTHING RETURNING pattern";
const std::string select_kept = "SELECT " + sqlite::column_list(kept_upstream_file_columns) + " FROM upstream_files ";
const std::string kept_by_name = select_kept + "WHERE sha256 = ?1 AND filename = ?2";
// A file kept and its .metadata kept are two events: each keeps what the row knew of the other.
const std::string upsert_kept =
    "INSERT INTO upstream_files (" + sqlite::column_list(kept_upstream_file_columns) + ") VALUES (" +
    sqlite::parameter_list(kept_upstream_file_columns, 1) +
    ") ON CONFLICT (sha256, filename) DO UPDATE SET url = excluded.url, upstream = excluded.upstream, "
    "size = max(size, excluded.size), "
    "metadata_sha256 = CASE excluded.metadata_sha256 WHEN '' THEN metadata_sha256 ELSE excluded.metadata_sha256 END, "
    "kept_ms = excluded.kept_ms";

template <class Row, class Columns>
result<std::vector<Row>> read_rows(sqlite::statement& query, const Columns& columns) {
    std::vector<Row> rows;
    for (;;) {
        auto more = query.step();
        if (!more) return more.error();
        if (!*more) return rows;
        Row row;
        sqlite::read_columns(query, 0, columns, row);
        rows.push_back(std::move(row));
    }
}

}  // namespace

result<name_facts> facts_of_name(const catalog& catalog, std::string_view project) {
    name_facts facts;
    auto read = catalog.read_snapshot([&](sqlite::connection& db) -> result<void> {
        auto known = db.cached("SELECT EXISTS (SELECT 1 FROM projects WHERE name = ?1)");
        if (!known) return known.error();
        (*known)->bind_text(1, project);
        if (auto row = (*known)->step(); !row) return row.error();
        facts.known_locally = (*known)->column_bool(0);
        auto patterns = db.cached("SELECT pattern FROM reserved_names");
        if (!patterns) return patterns.error();
        for (;;) {
            auto row = (*patterns)->step();
            if (!row) return row.error();
            if (!*row) return {};
            facts.reserved_patterns.push_back((*patterns)->column_text(0));
        }
    });
    if (!read) return read.error();
    return facts;
}

result<std::vector<reservation>> list_reservations(const catalog& catalog) {
    std::vector<reservation> out;
    auto read = catalog.read_snapshot([&](sqlite::connection& db) -> result<void> {
        auto query = db.cached(select_reservations);
        if (!query) return query.error();
        auto rows = read_rows<reservation>(**query, reservation_columns);
        if (!rows) return rows.error();
        out = std::move(*rows);
        return {};
    });
    if (!read) return read.error();
    return out;
}

result<bool> reserve_name(catalog& catalog, std::string_view pattern, const std::optional<std::string>& reason,
                          std::string_view actor) {
    bool added = false;
    auto written = catalog.write_transaction([&](sqlite::connection& db) -> result<void> {
        auto insert = db.cached(insert_reservation);
        if (!insert) return insert.error();
        const reservation row{std::string(pattern), reason, now_ms(), std::string(actor)};
        sqlite::bind_columns(**insert, 1, reservation_columns, row);
        auto inserted = (*insert)->step();  // a row back: it was not there
        if (!inserted) return inserted.error();
        added = *inserted;
        if (!added) return {};
        return write_audit(db, actor, "reserve_name", pattern, reason);
    });
    if (!written) return written.error();
    return added;
}

result<bool> release_name(catalog& catalog, std::string_view pattern, std::string_view actor) {
    bool removed = false;
    auto written = catalog.write_transaction([&](sqlite::connection& db) -> result<void> {
        auto remove = db.cached("DELETE FROM reserved_names WHERE pattern = ?1 RETURNING pattern");
        if (!remove) return remove.error();
        (*remove)->bind_text(1, pattern);
        auto deleted = (*remove)->step();
        if (!deleted) return deleted.error();
        removed = *deleted;
        if (!removed) return {};
        return write_audit(db, actor, "release_name", pattern, std::nullopt);
    });
    if (!written) return written.error();
    return removed;
}

result<std::optional<kept_upstream_file>> find_kept_file(const catalog& catalog, std::string_view sha256,
                                                          std::string_view filename) {
    std::optional<kept_upstream_file> found;
    auto read = catalog.read_snapshot([&](sqlite::connection& db) -> result<void> {
        auto query = db.cached(kept_by_name);
        if (!query) return query.error();
        (*query)->bind_text(1, sha256).bind_text(2, filename);
        auto rows = read_rows<kept_upstream_file>(**query, kept_upstream_file_columns);
        if (!rows) return rows.error();
        if (!rows->empty()) found = std::move(rows->front());
        return {};
    });
    if (!read) return read.error();
    return found;
}

result<void> record_kept_file(catalog& catalog, const kept_upstream_file& file) {
    return catalog.write_transaction([&](sqlite::connection& db) -> result<void> {
        auto upsert = db.cached(upsert_kept);
        if (!upsert) return upsert.error();
        auto row = file;
        if (row.kept_ms == 0) row.kept_ms = now_ms();
        sqlite::bind_columns(**upsert, 1, kept_upstream_file_columns, row);
        return (*upsert)->run();
    });
}

result<kept_totals> count_kept_files(const catalog& catalog) {
    kept_totals totals;
    auto read = catalog.read_snapshot([&](sqlite::connection& db) -> result<void> {
        auto query = db.cached("SELECT count(*) FILTER (WHERE size > 0), coalesce(sum(size), 0), "
                               "count(*) FILTER (WHERE metadata_sha256 != '') FROM upstream_files");
        if (!query) return query.error();
        auto row = (*query)->step();
        if (!row) return row.error();
        totals.files = static_cast<std::uint64_t>((*query)->column_int64(0));
        totals.bytes = static_cast<std::uint64_t>((*query)->column_int64(1));
        totals.metadata_files = static_cast<std::uint64_t>((*query)->column_int64(2));
        return {};
    });
    if (!read) return read.error();
    return totals;
}

result<std::vector<kept_project>> list_kept_projects(const catalog& catalog) {
    std::vector<kept_project> projects;
    auto read = catalog.read_snapshot([&](sqlite::connection& db) -> result<void> {
        auto query = db.cached("SELECT project, max(upstream), count(*) FILTER (WHERE size > 0), coalesce(sum(size), 0), "
                               "count(*) FILTER (WHERE metadata_sha256 != '') FROM upstream_files "
                               "GROUP BY project ORDER BY project");
        if (!query) return query.error();
        for (;;) {
            auto row = (*query)->step();
            if (!row) return row.error();
            if (!*row) return {};
            const auto& each = **query;
            projects.push_back({each.column_text(0), each.column_text(1),
                                {static_cast<std::uint64_t>(each.column_int64(2)),
                                 static_cast<std::uint64_t>(each.column_int64(3)),
                                 static_cast<std::uint64_t>(each.column_int64(4))}});
        }
    });
    if (!read) return read.error();
    return projects;
}

result<std::vector<kept_upstream_file>> drop_kept_files(catalog& catalog, std::int64_t kept_before_ms,
                                                         const std::optional<std::string>& project,
                                                         const std::function<result<void>(std::string_view)>& remove_blob) {
    std::vector<kept_upstream_file> dropped;
    auto written = catalog.write_transaction([&](sqlite::connection& db) -> result<void> {
        auto query = db.prepare(select_kept + "WHERE kept_ms < ?1 AND (?2 IS NULL OR project = ?2)");
        if (!query) return query.error();
        query->bind_int64(1, kept_before_ms).bind_optional_text(2, project);
        auto rows = read_rows<kept_upstream_file>(*query, kept_upstream_file_columns);
        if (!rows) return rows.error();
        dropped = std::move(*rows);
        auto remove = db.cached("DELETE FROM upstream_files WHERE sha256 = ?1 AND filename = ?2");
        if (!remove) return remove.error();
        for (const auto& row : dropped) {
            (*remove)->bind_text(1, row.sha256).bind_text(2, row.filename);
            if (auto done = (*remove)->run(); !done) return done.error();
            (*remove)->reset();
        }
        return {};
    });
    if (!written) return written.error();
    // Each blob goes only when no row (of files or upstream_files) uses it any more.
    for (const auto& row : dropped) {
        auto released = catalog.release_blob(row.sha256, [&] { return remove_blob(row.sha256); });
        if (!released) return released.error();
    }
    return dropped;
}

}  // namespace wheelhouse::catalog
