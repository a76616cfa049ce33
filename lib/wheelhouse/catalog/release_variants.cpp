#include "wheelhouse/catalog/release_variants.hpp"

#include <string>

#include "wheelhouse/catalog/audit.hpp"
#include "wheelhouse/catalog/row_columns.hpp"
#include "wheelhouse/crypto/hasher.hpp"
#include "wheelhouse/error_text.hpp"
#include "wheelhouse/pep825/variant_metadata.hpp"

namespace wheelhouse::catalog {
namespace {

const std::string insert_property = "INSERT INTO variant_properties (file_id, " +
                                    sqlite::column_list(property_columns) + ") VALUES (?1, " +
                                    sqlite::parameter_list(property_columns, 2) + ")";
// In the order of the table's key, which is the map's.
const std::string properties_of_file = "SELECT " + sqlite::column_list(property_columns) +
                                       " FROM variant_properties WHERE file_id = ?1 ORDER BY namespace, feature, value";

// The columns of a variant wheel that its release's variants.json is made from, beside its id
// and properties.
constexpr auto variant_wheel_columns = sqlite::pick(file_columns, {"filename", "variant_label", "variant_namespaces"});

// The variant wheels of one release, by filename, with only variant_wheel_columns read.
result<std::vector<file_record>> variant_rows(sqlite::connection& db, std::int64_t project_id,
                                              std::string_view normalized_version) {
    static const std::string by_release =
        "SELECT id, " + sqlite::column_list(variant_wheel_columns) +
        " FROM files WHERE project_id = ?1 AND normalized_version = ?2 AND variant_label IS NOT NULL ORDER BY filename";
    auto query = db.cached(by_release);
    if (!query) return query.error();
    (*query)->bind_int64(1, project_id).bind_text(2, normalized_version);
    std::vector<file_record> rows;
    for (;;) {
        auto row = (*query)->step();
        if (!row) return row.error();
        if (!*row) break;
        auto& file = rows.emplace_back();
        file.id = (*query)->column_int64(0);
        sqlite::read_columns(**query, 1, variant_wheel_columns, file);
    }
    for (auto& file : rows) {
        if (auto read = read_variant_properties(db, file); !read) return read.error();
    }
    return rows;
}

// The release's namespace priorities: the longest list, of which every other one is a part.
result<std::vector<std::string>> release_namespaces(const std::vector<file_record>& rows) {
    std::vector<std::string> merged;
    for (const auto& row : rows) {
        auto listed = pep825::parse_namespaces_json(row.variant_namespaces);
        if (!listed) return make_error(error_kind::internal, row.filename + ": " + listed.error().message);
        auto next = pep825::merge_namespace_priorities(merged, *listed);
        if (!next) return make_error(error_kind::internal, row.filename + ": " + describe(next.error()));
        merged = std::move(*next);
    }
    return merged;
}

// A whole release_variants row: the project's name (by the join), then release_columns.
const std::string select_release = "SELECT p.name, " + sqlite::column_list(release_columns, "r.") +
                                   " FROM release_variants r JOIN projects p ON p.id = r.project_id ";

release_variants_file read_release_row(const sqlite::statement& row) {
    release_variants_file file;
    file.project = row.column_text(0);
    sqlite::read_columns(row, 1, release_columns, file);
    return file;
}

// Leaves the row alone when the content is unchanged; normalized_version, of the key, is set
// to itself.
const std::string upsert_release = "INSERT INTO release_variants (project_id, " + sqlite::column_list(release_columns) +
                                   ") VALUES (?1, " + sqlite::parameter_list(release_columns, 2) +
                                   ") ON CONFLICT (project_id, normalized_version) DO UPDATE SET " +
                                   sqlite::assignment_list(release_columns) +
                                   " WHERE release_variants.sha256 <> excluded.sha256";

}  // namespace

result<void> write_variant_properties(sqlite::connection& db, const file_record& file) {
    auto insert = db.cached(insert_property);
    if (!insert) return insert.error();
    variant_property row;
    for (const auto& [space, features] : file.variant_properties) {
        for (const auto& [feature, values] : features) {
            for (const auto& value : values) {
                row = {space, feature, value};
                (*insert)->bind_int64(1, file.id);
                sqlite::bind_columns(**insert, 2, property_columns, row);
                if (auto done = (*insert)->run(); !done) return done.error();
                (*insert)->reset();
            }
        }
    }
    return {};
}

result<void> read_variant_properties(sqlite::connection& db, file_record& file) {
    file.variant_properties.clear();
    if (!file.variant_label) return {};
    auto query = db.cached(properties_of_file);
    if (!query) return query.error();
    (*query)->bind_int64(1, file.id);
    auto& properties = file.variant_properties;
    variant_property row;
    for (;;) {
        auto step = (*query)->step();
        if (!step) return step.error();
        if (!*step) return {};
        sqlite::read_columns(**query, 0, property_columns, row);
        // The rows come in key order: each namespace and feature is new or the last one made.
        auto space = properties.try_emplace(properties.end(), std::move(row.space));
        auto feature = space->second.try_emplace(space->second.end(), std::move(row.feature));
        feature->second.push_back(std::move(row.value));
    }
}

result<void> check_variant_fits(sqlite::connection& db, std::int64_t project_id, const file_record& file) {
    if (!file.variant_label) return {};
    auto rows = variant_rows(db, project_id, file.normalized_version);
    if (!rows) return rows.error();
    for (const auto& row : *rows) {
        if (row.variant_label != file.variant_label || row.variant_properties == file.variant_properties) continue;
        return make_error(error_kind::conflict,
                          "give the build another variant label: '" + *row.variant_label +
                              "' already names other properties in release " + file.normalized_version,
                          row.filename + " has " + pep825::describe(row.variant_properties) + "; " + file.filename +
                              " has " + pep825::describe(file.variant_properties) +
                              "; PEP 825 lets a label mean one set of properties per release");
    }
    auto merged = release_namespaces(*rows);
    if (!merged) return merged.error();
    auto own = pep825::parse_namespaces_json(file.variant_namespaces);
    if (!own) return make_error(error_kind::internal, file.filename + ": " + own.error().message);
    if (auto fits = pep825::merge_namespace_priorities(*merged, *own); !fits) return fits.error();
    return {};
}

result<void> rewrite_release_variants(sqlite::connection& db, std::int64_t project_id, std::string_view project,
                                      std::string_view normalized_version) {
    auto rows = variant_rows(db, project_id, normalized_version);
    if (!rows) return rows.error();
    if (rows->empty()) {
        auto remove = db.cached("DELETE FROM release_variants WHERE project_id = ?1 AND normalized_version = ?2");
        if (!remove) return remove.error();
        (*remove)->bind_int64(1, project_id).bind_text(2, normalized_version);
        return (*remove)->run();
    }
    pep825::variant_metadata release;
    auto namespaces = release_namespaces(*rows);
    if (!namespaces) return namespaces.error();
    release.namespace_priorities = std::move(*namespaces);
    for (auto& row : *rows) release.variants.emplace(*row.variant_label, std::move(row.variant_properties));
    release_variants_file file;
    file.normalized_version = normalized_version;
    file.filename = pep825::release_variants_filename(project, normalized_version);
    file.content = pep825::release_variants_json(release);
    file.sha256 = crypto::sha256_hex(file.content);
    file.updated_ms = now_ms();
    auto upsert = db.cached(upsert_release);
    if (!upsert) return upsert.error();
    (*upsert)->bind_int64(1, project_id);
    sqlite::bind_columns(**upsert, 2, release_columns, file);
    return (*upsert)->run();
}

result<std::vector<release_variants_file>> read_release_variants(sqlite::connection& db, std::string_view project) {
    static const std::string by_project = select_release + "WHERE p.name = ?1 ORDER BY r.normalized_version";
    auto query = db.cached(by_project);
    if (!query) return query.error();
    (*query)->bind_text(1, project);
    std::vector<release_variants_file> files;
    for (;;) {
        auto row = (*query)->step();
        if (!row) return row.error();
        if (!*row) break;
        files.push_back(read_release_row(**query));
    }
    return files;
}

result<std::optional<release_variants_file>> find_release_variants(sqlite::connection& db, std::string_view sha256,
                                                                   std::string_view filename) {
    static const std::string by_sha256 = select_release + "WHERE r.sha256 = ?1 AND r.filename = ?2";
    auto query = db.cached(by_sha256);
    if (!query) return query.error();
    (*query)->bind_text(1, sha256).bind_text(2, filename);
    auto row = (*query)->step();
    if (!row) return row.error();
    if (!*row) return std::optional<release_variants_file>();
    return std::optional(read_release_row(**query));
}

}  // namespace wheelhouse::catalog
