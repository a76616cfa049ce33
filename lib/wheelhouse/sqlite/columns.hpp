#pragma once
// A row type's columns as data, as routes are: one list of {name, bind, read} per row type,
// from which an INSERT's column list and parameters, a SELECT's column list and the row reader
// are all made, so each column is named once. Reading a row walks the list by position: no
// name is looked up and no SQL is built per row (the statements are made once, then cached).

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "wheelhouse/sqlite/statement.hpp"

namespace wheelhouse::sqlite {

template <class Record>
struct column {
    std::string_view name;
    void (*bind)(statement& query, int parameter, const Record& record);
    void (*read)(const statement& row, int index, Record& record);
};

// A field's value as SQLite stores it, one overload per type a row holds. A row type of its
// own (an enumeration) adds its pair beside the type, found by argument-dependent lookup.
inline void bind_value(statement& query, int parameter, const std::string& value) { query.bind_text(parameter, value); }
inline void bind_value(statement& query, int parameter, const std::optional<std::string>& value) {
    query.bind_optional_text(parameter, value);
}
inline void bind_value(statement& query, int parameter, std::int64_t value) { query.bind_int64(parameter, value); }
inline void bind_value(statement& query, int parameter, std::uint64_t value) {
    query.bind_int64(parameter, static_cast<std::int64_t>(value));
}
inline void bind_value(statement& query, int parameter, bool value) { query.bind_bool(parameter, value); }
inline void bind_value(statement& query, int parameter, std::optional<bool> value) {
    query.bind_optional_int64(parameter, value ? std::optional<std::int64_t>(*value ? 1 : 0) : std::nullopt);
}

inline void read_value(const statement& row, int index, std::string& value) { value = row.column_text(index); }
inline void read_value(const statement& row, int index, std::optional<std::string>& value) {
    value = row.column_optional_text(index);
}
inline void read_value(const statement& row, int index, std::int64_t& value) { value = row.column_int64(index); }
inline void read_value(const statement& row, int index, std::uint64_t& value) {
    value = static_cast<std::uint64_t>(row.column_int64(index));
}
inline void read_value(const statement& row, int index, bool& value) { value = row.column_bool(index); }
inline void read_value(const statement& row, int index, std::optional<bool>& value) {
    value = row.column_is_null(index) ? std::nullopt : std::optional<bool>(row.column_bool(index));
}

template <class Pointer>
struct member_of;
template <class Owner, class Field>
struct member_of<Field Owner::*> {
    using owner = Owner;
};

// The column `name` holding the field `path` reaches: &record::field, or a field of a member
// (&file_record::variant, &build_variant::cuda).
template <auto first, auto... rest>
constexpr auto field(std::string_view name) {
    using record = typename member_of<decltype(first)>::owner;
    return column<record>{
        name,
        [](statement& query, int parameter, const record& values) {
            bind_value(query, parameter, ((values.*first) .* ... .*rest));
        },
        [](const statement& row, int index, record& values) { read_value(row, index, ((values.*first) .* ... .*rest)); },
    };
}

// The columns of `all` named in `names`, in that order, for a query that reads only those; a
// name that is not in `all` does not compile.
template <class Record, std::size_t size, std::size_t count>
consteval std::array<column<Record>, count> pick(const std::array<column<Record>, size>& all,
                                                 const std::string_view (&names)[count]) {
    std::array<column<Record>, count> picked{};
    for (std::size_t i = 0; i < count; ++i) {
        std::size_t at = 0;
        while (at < size && all[at].name != names[i]) ++at;
        if (at == size) throw "pick: no column of that name";  // not a constant: a compile error
        picked[i] = all[at];
    }
    return picked;
}

// "f.a, f.b, …": each column's name after `prefix` (a table alias and its dot, or none).
template <class Columns>
std::string column_list(const Columns& columns, std::string_view prefix = {}) {
    std::string list;
    for (const auto& one : columns) {
        if (!list.empty()) list += ", ";
        list.append(prefix).append(one.name);
    }
    return list;
}

// "a = excluded.a, …": an upsert's DO UPDATE SET of every column.
template <class Columns>
std::string assignment_list(const Columns& columns) {
    std::string list;
    for (const auto& one : columns) {
        if (!list.empty()) list += ", ";
        list.append(one.name).append(" = excluded.").append(one.name);
    }
    return list;
}

// "?first, ?first+1, …", one per column.
template <class Columns>
std::string parameter_list(const Columns& columns, int first) {
    std::string list;
    for (std::size_t i = 0; i < columns.size(); ++i) {
        if (!list.empty()) list += ", ";
        list += '?' + std::to_string(first + static_cast<int>(i));
    }
    return list;
}

// Binds `record` to the parameters from `first` on, in the list's order.
template <class Columns, class Record>
void bind_columns(statement& query, int first, const Columns& columns, const Record& record) {
    for (const auto& one : columns) one.bind(query, first++, record);
}

// Reads `record` from the row's columns from `first` on, in the list's order.
template <class Columns, class Record>
void read_columns(const statement& row, int first, const Columns& columns, Record& record) {
    for (const auto& one : columns) one.read(row, first++, record);
}

}  // namespace wheelhouse::sqlite
