#include "wheelhouse/sqlite/statement.hpp"

#include <sqlite3.h>

#include <utility>

#include "wheelhouse/sqlite/connection.hpp"

namespace wheelhouse::sqlite {

statement::statement(statement&& other) noexcept
    : db_(std::exchange(other.db_, nullptr)),
      handle_(std::exchange(other.handle_, nullptr)),
      bind_error_(other.bind_error_),
      bind_error_index_(other.bind_error_index_) {}

statement& statement::operator=(statement&& other) noexcept {
    if (this != &other) {
        sqlite3_finalize(handle_);
        db_ = std::exchange(other.db_, nullptr);
        handle_ = std::exchange(other.handle_, nullptr);
        bind_error_ = other.bind_error_;
        bind_error_index_ = other.bind_error_index_;
    }
    return *this;
}

statement::~statement() { sqlite3_finalize(handle_); }

void statement::remember(int code, int index) noexcept {
    if (code != SQLITE_OK && bind_error_ == SQLITE_OK) {
        bind_error_ = code;
        bind_error_index_ = index;
    }
}

statement& statement::bind_int64(int index, std::int64_t value) {
    remember(sqlite3_bind_int64(handle_, index, value), index);
    return *this;
}

statement& statement::bind_text(int index, std::string_view value) {
    // SQLITE_TRANSIENT: SQLite copies, so the caller's string may die before step().
    remember(sqlite3_bind_text64(handle_, index, value.data(), value.size(), SQLITE_TRANSIENT, SQLITE_UTF8), index);
    return *this;
}

statement& statement::bind_null(int index) {
    remember(sqlite3_bind_null(handle_, index), index);
    return *this;
}

statement& statement::bind_optional_text(int index, const std::optional<std::string>& value) {
    return value ? bind_text(index, *value) : bind_null(index);
}

statement& statement::bind_optional_int64(int index, std::optional<std::int64_t> value) {
    return value ? bind_int64(index, *value) : bind_null(index);
}

result<bool> statement::step() {
    if (bind_error_ != SQLITE_OK) {
        return make_sqlite_error(db_, bind_error_,
                                 "binding parameter " + std::to_string(bind_error_index_) + " of \"" +
                                     sqlite3_sql(handle_) + "\"");
    }
    const int code = sqlite3_step(handle_);
    if (code == SQLITE_ROW) return true;
    if (code == SQLITE_DONE) return false;
    return make_sqlite_error(db_, code, std::string("running \"") + sqlite3_sql(handle_) + "\"");
}

result<void> statement::run() {
    for (;;) {
        auto row = step();
        if (!row) return row.error();
        if (!*row) return {};
    }
}

bool statement::column_is_null(int index) const noexcept { return sqlite3_column_type(handle_, index) == SQLITE_NULL; }

std::int64_t statement::column_int64(int index) const noexcept { return sqlite3_column_int64(handle_, index); }

std::string statement::column_text(int index) const {
    const auto* text = reinterpret_cast<const char*>(sqlite3_column_text(handle_, index));
    if (text == nullptr) return {};
    return std::string(text, static_cast<std::size_t>(sqlite3_column_bytes(handle_, index)));
}

std::optional<std::string> statement::column_optional_text(int index) const {
    if (column_is_null(index)) return std::nullopt;
    return column_text(index);
}

std::optional<std::int64_t> statement::column_optional_int64(int index) const {
    if (column_is_null(index)) return std::nullopt;
    return column_int64(index);
}

void statement::reset() noexcept {
    sqlite3_reset(handle_);
    sqlite3_clear_bindings(handle_);
    bind_error_ = SQLITE_OK;
    bind_error_index_ = 0;
}

}  // namespace wheelhouse::sqlite
