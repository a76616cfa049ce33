#include "wheelhouse/catalog/release_variants.hpp"

#include <string>

#include "wheelhouse/catalog/audit.hpp"
#include "wheelhouse/crypto/hasher.hpp"
#include "wheelhouse/error_text.hpp"
#include "wheelhouse/pep825/variant_metadata.hpp"

namespace wheelhouse::catalog {
namespace {

struct variant_row {
    std::string filename;
    std::string label;
    std::string properties;
    std::string namespaces;
};

// The variant wheels of one release, by filename.
result<std::vector<variant_row>> variant_rows(sqlite::connection& db, std::int64_t project_id,
                                              std::string_view normalized_version) {
    auto query = db.cached(
        "SELECT filename, variant_label, variant_properties, variant_namespaces FROM files "
        "WHERE project_id = ?1 AND normalized_version = ?2 AND variant_label IS NOT NULL ORDER BY filename");
    if (!query) return query.error();
    (*query)->bind_int64(1, project_id).bind_text(2, normalized_version);
    std::vector<variant_row> rows;
    for (;;) {
        auto row = (*query)->step();
        if (!row) return row.error();
        if (!*row) break;
        rows.push_back({(*query)->column_text(0), (*query)->column_text(1), (*query)->column_text(2),
                        (*query)->column_text(3)});
    }
    return rows;
}

// The release's namespace priorities: the longest list, of which every other one is a part.
result<std::vector<std::string>> release_namespaces(const std::vector<variant_row>& rows) {
    std::vector<std::string> merged;
    for (const auto& row : rows) {
        auto listed = pep825::parse_namespaces_json(row.namespaces);
        if (!listed) return make_error(error_kind::internal, row.filename + ": " + listed.error().message);
        auto next = pep825::merge_namespace_priorities(merged, *listed);
        if (!next) return make_error(error_kind::internal, row.filename + ": " + describe(next.error()));
        merged = std::move(*next);
    }
    return merged;
}

std::string shown_properties(std::string_view json) {
    auto parsed = pep825::parse_properties_json(json);
    return parsed ? pep825::describe(*parsed) : std::string(json);
}

release_variants_file read_release_row(const sqlite::statement& row) {
    return {row.column_text(0), row.column_text(1), row.column_text(2), row.column_text(3), row.column_text(4),
            row.column_int64(5)};
}

constexpr std::string_view select_release =
    "SELECT p.name, r.normalized_version, r.filename, r.content, r.sha256, r.updated_ms "
    "FROM release_variants r JOIN projects p ON p.id = r.project_id ";

}  // namespace

result<void> check_variant_fits(sqlite::connection& db, std::int64_t project_id, const file_record& file) {
    if (!file.variant_label) return {};
    auto rows = variant_rows(db, project_id, file.normalized_version);
    if (!rows) return rows.error();
    for (const auto& row : *rows) {
        if (row.label != *file.variant_label || row.properties == file.variant_properties) continue;
        return make_error(error_kind::conflict,
                          "give the build another variant label: '" + row.label +
                              "' already names other properties in release " + file.normalized_version,
                          row.filename + " has " + shown_properties(row.properties) + "; " + file.filename + " has " +
                              shown_properties(file.variant_properties) +
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
    for (const auto& row : *rows) {
        auto properties = pep825::parse_properties_json(row.properties);
        if (!properties) return make_error(error_kind::internal, row.filename + ": " + properties.error().message);
        release.variants.emplace(row.label, std::move(*properties));
    }
    const std::string content = pep825::release_variants_json(release);
    auto upsert = db.cached(
        "INSERT INTO release_variants (project_id, normalized_version, filename, content, sha256, updated_ms) "
        "VALUES (?1, ?2, ?3, ?4, ?5, ?6) ON CONFLICT (project_id, normalized_version) DO UPDATE SET "
        "filename = excluded.filename, content = excluded.content, sha256 = excluded.sha256, "
        "updated_ms = excluded.updated_ms WHERE release_variants.sha256 <> excluded.sha256");
    if (!upsert) return upsert.error();
    (*upsert)
        ->bind_int64(1, project_id)
        .bind_text(2, normalized_version)
        .bind_text(3, pep825::release_variants_filename(project, normalized_version))
        .bind_text(4, content)
        .bind_text(5, crypto::sha256_hex(content))
        .bind_int64(6, now_ms());
    return (*upsert)->run();
}

result<std::vector<release_variants_file>> read_release_variants(sqlite::connection& db, std::string_view project) {
    static const std::string by_project = std::string(select_release) + "WHERE p.name = ?1 ORDER BY r.normalized_version";
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
    static const std::string by_sha256 = std::string(select_release) + "WHERE r.sha256 = ?1 AND r.filename = ?2";
    auto query = db.cached(by_sha256);
    if (!query) return query.error();
    (*query)->bind_text(1, sha256).bind_text(2, filename);
    auto row = (*query)->step();
    if (!row) return row.error();
    if (!*row) return std::optional<release_variants_file>();
    return std::optional(read_release_row(**query));
}

}  // namespace wheelhouse::catalog
