#pragma once
// The catalog's rows as columns (sqlite/columns.hpp): the lists below are the only place a
// column of `files`, `projects`, `release_variants`, `variant_properties`, `reserved_names` or
// `upstream_files` is named. Every INSERT, SELECT and row reader of those tables is made from them.
//
// Adding a column is one line in its list here (beside its field in records.hpp and the
// migration in schema/ that adds it to the table): `sqlite::field<&file_record::x>("x")`, or
// for a type without a bind_value/read_value pair yet, that pair declared below.
//
// Outside the lists: each row's id (assigned by SQLite, read first), the project of a file or
// release row, read as p.name through the join and written as project_id, and the file_id of a
// property row.

#include <array>
#include <string>

#include "wheelhouse/catalog/records.hpp"
#include "wheelhouse/catalog/upstream_records.hpp"
#include "wheelhouse/sqlite/columns.hpp"
#include "wheelhouse/sqlite/statement.hpp"

namespace wheelhouse::catalog {

// How the enumerations are stored: the spellings the schema's CHECK constraints use. An
// unknown spelling reads as the first value, as it did before it could be stored.
void bind_value(sqlite::statement& query, int parameter, project_status value);
void read_value(const sqlite::statement& row, int index, project_status& value);
void bind_value(sqlite::statement& query, int parameter, download_mode value);
void read_value(const sqlite::statement& row, int index, download_mode& value);
void bind_value(sqlite::statement& query, int parameter, package_type value);
void read_value(const sqlite::statement& row, int index, package_type& value);
// variant.unparsed: a JSON array of strings, NULL when empty.
void bind_unparsed(sqlite::statement& query, int parameter, const file_record& file);
void read_unparsed(const sqlite::statement& row, int index, file_record& file);

inline constexpr std::array file_columns = {
    sqlite::field<&file_record::filename>("filename"),
    sqlite::field<&file_record::version>("version"),
    sqlite::field<&file_record::normalized_version>("normalized_version"),
    sqlite::field<&file_record::local_label>("local_label"),
    sqlite::field<&file_record::python_tag>("python_tag"),
    sqlite::field<&file_record::abi_tag>("abi_tag"),
    sqlite::field<&file_record::platform_tag>("platform_tag"),
    sqlite::field<&file_record::build_tag>("build_tag"),
    sqlite::field<&file_record::variant, &variants::build_variant::cuda>("cuda"),
    sqlite::field<&file_record::variant, &variants::build_variant::sm>("sm"),
    sqlite::field<&file_record::variant, &variants::build_variant::torch>("torch"),
    sqlite::field<&file_record::variant, &variants::build_variant::torch_and_higher>("torch_and_higher"),
    sqlite::field<&file_record::variant, &variants::build_variant::cxx11abi>("cxx11abi"),
    sqlite::field<&file_record::variant, &variants::build_variant::rocm>("rocm"),
    sqlite::field<&file_record::variant, &variants::build_variant::cpu>("cpu"),
    sqlite::field<&file_record::variant, &variants::build_variant::xpu>("xpu"),
    sqlite::field<&file_record::variant, &variants::build_variant::git_hash>("git_hash"),
    sqlite::field<&file_record::variant, &variants::build_variant::build_date>("build_date"),
    sqlite::column<file_record>{"variant_unparsed", bind_unparsed, read_unparsed},
    sqlite::field<&file_record::sha256>("sha256"),
    sqlite::field<&file_record::size>("size"),
    sqlite::field<&file_record::requires_python>("requires_python"),
    sqlite::field<&file_record::summary>("summary"),
    sqlite::field<&file_record::upload_time_ms>("upload_time_ms"),
    sqlite::field<&file_record::yanked_reason>("yanked_reason"),
    sqlite::field<&file_record::mode>("download_mode"),
    sqlite::field<&file_record::remote_url>("remote_url"),
    sqlite::field<&file_record::metadata_sha256>("metadata_sha256"),
    sqlite::field<&file_record::metadata_size>("metadata_size"),
    sqlite::field<&file_record::uploaded_by>("uploaded_by"),
    sqlite::field<&file_record::fetch_url>("fetch_url"),
    sqlite::field<&file_record::variant_label>("variant_label"),
    sqlite::field<&file_record::variant_namespaces>("variant_namespaces"),
    sqlite::field<&file_record::type>("packagetype"),
    sqlite::field<&file_record::attested>("attested"),
};

inline constexpr std::array project_columns = {
    sqlite::field<&project_record::name>("name"),
    sqlite::field<&project_record::display_name>("display_name"),
    sqlite::field<&project_record::status>("status"),
    sqlite::field<&project_record::status_reason>("status_reason"),
};

inline constexpr std::array release_columns = {
    sqlite::field<&release_variants_file::normalized_version>("normalized_version"),
    sqlite::field<&release_variants_file::filename>("filename"),
    sqlite::field<&release_variants_file::content>("content"),
    sqlite::field<&release_variants_file::sha256>("sha256"),
    sqlite::field<&release_variants_file::updated_ms>("updated_ms"),
};

// variant_properties rows, beside the file_id they belong to.
inline constexpr std::array property_columns = {
    sqlite::field<&variant_property::space>("namespace"),
    sqlite::field<&variant_property::feature>("feature"),
    sqlite::field<&variant_property::value>("value"),
};

// Upstream indexes (upstream_rows.hpp): their tables hold no id of their own beyond these.
inline constexpr std::array reservation_columns = {
    sqlite::field<&reservation::pattern>("pattern"),
    sqlite::field<&reservation::reason>("reason"),
    sqlite::field<&reservation::created_ms>("created_ms"),
    sqlite::field<&reservation::created_by>("created_by"),
};

inline constexpr std::array kept_upstream_file_columns = {
    sqlite::field<&kept_upstream_file::sha256>("sha256"),
    sqlite::field<&kept_upstream_file::filename>("filename"),
    sqlite::field<&kept_upstream_file::project>("project"),
    sqlite::field<&kept_upstream_file::upstream>("upstream"),
    sqlite::field<&kept_upstream_file::url>("url"),
    sqlite::field<&kept_upstream_file::size>("size"),
    sqlite::field<&kept_upstream_file::metadata_sha256>("metadata_sha256"),
    sqlite::field<&kept_upstream_file::kept_ms>("kept_ms"),
};

// "f.id, p.name, f.filename, …": a whole file row, read from `files f JOIN projects p ON
// p.id = f.project_id` by read_file_row.
const std::string& file_row_columns();
file_record read_file_row(const sqlite::statement& row);

// "p.id, p.name, …": a whole project row, read from `projects p` by read_project_row from
// column `first`; it takes project_row_width columns.
const std::string& project_row_columns();
project_record read_project_row(const sqlite::statement& row, int first = 0);
inline constexpr int project_row_width = 1 + static_cast<int>(project_columns.size());

}  // namespace wheelhouse::catalog
