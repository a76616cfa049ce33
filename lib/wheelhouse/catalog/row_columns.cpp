#include "wheelhouse/catalog/row_columns.hpp"

#include <boost/json.hpp>

namespace wheelhouse::catalog {

void bind_value(sqlite::statement& query, int parameter, project_status value) {
    query.bind_text(parameter, to_string(value));
}

void read_value(const sqlite::statement& row, int index, project_status& value) {
    value = parse_project_status(row.column_text(index)).value_or(project_status::active);
}

void bind_value(sqlite::statement& query, int parameter, download_mode value) {
    query.bind_text(parameter, to_string(value));
}

void read_value(const sqlite::statement& row, int index, download_mode& value) {
    value = parse_download_mode(row.column_text(index)).value_or(download_mode::local);
}

void bind_value(sqlite::statement& query, int parameter, package_type value) {
    query.bind_text(parameter, to_string(value));
}

void read_value(const sqlite::statement& row, int index, package_type& value) {
    value = parse_package_type(row.column_text(index)).value_or(package_type::wheel);
}

void bind_unparsed(sqlite::statement& query, int parameter, const file_record& file) {
    const auto& pieces = file.variant.unparsed;
    if (pieces.empty()) {
        query.bind_null(parameter);
        return;
    }
    boost::json::array array;
    for (const auto& piece : pieces) array.emplace_back(piece);
    query.bind_text(parameter, boost::json::serialize(array));
}

void read_unparsed(const sqlite::statement& row, int index, file_record& file) {
    auto& pieces = file.variant.unparsed;
    pieces.clear();
    const auto text = row.column_optional_text(index);
    if (!text) return;
    boost::system::error_code failure;
    const auto value = boost::json::parse(*text, failure);
    if (failure || !value.is_array()) {
        pieces.push_back(*text);  // keep what is there rather than lose it
        return;
    }
    for (const auto& piece : value.as_array()) {
        if (piece.is_string()) pieces.emplace_back(piece.as_string());
    }
}

const std::string& file_row_columns() {
    static const std::string columns = "f.id, p.name, " + sqlite::column_list(file_columns, "f.");
    return columns;
}

file_record read_file_row(const sqlite::statement& row) {
    file_record file;
    file.id = row.column_int64(0);
    file.project = row.column_text(1);
    sqlite::read_columns(row, 2, file_columns, file);
    return file;
}

const std::string& project_row_columns() {
    static const std::string columns = "p.id, " + sqlite::column_list(project_columns, "p.");
    return columns;
}

project_record read_project_row(const sqlite::statement& row, int first) {
    project_record project;
    project.id = row.column_int64(first);
    sqlite::read_columns(row, first + 1, project_columns, project);
    return project;
}

}  // namespace wheelhouse::catalog
