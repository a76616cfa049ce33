#pragma once
// A prepared statement, RAII. Values enter SQL only through bind_*; parameters are numbered
// from 1 as in SQLite, columns from 0.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "wheelhouse/result.hpp"

struct sqlite3;
struct sqlite3_stmt;

namespace wheelhouse::sqlite {

class statement {
public:
    statement() = default;
    statement(sqlite3* db, sqlite3_stmt* handle) noexcept : db_(db), handle_(handle) {}
    statement(statement&& other) noexcept;
    statement& operator=(statement&& other) noexcept;
    statement(const statement&) = delete;
    statement& operator=(const statement&) = delete;
    ~statement();

    // Binding never fails on its own: a failed bind is remembered and reported by the next step().
    statement& bind_int64(int index, std::int64_t value);
    statement& bind_bool(int index, bool value) { return bind_int64(index, value ? 1 : 0); }
    statement& bind_text(int index, std::string_view value);
    statement& bind_null(int index);
    statement& bind_optional_text(int index, const std::optional<std::string>& value);
    statement& bind_optional_int64(int index, std::optional<std::int64_t> value);

    // True when a row is ready to read, false when the statement is done.
    result<bool> step();
    // Steps to the end; for statements that return no rows.
    result<void> run();

    bool column_is_null(int index) const noexcept;
    std::int64_t column_int64(int index) const noexcept;
    bool column_bool(int index) const noexcept { return column_int64(index) != 0; }
    std::string column_text(int index) const;  // "" for NULL
    std::optional<std::string> column_optional_text(int index) const;
    std::optional<std::int64_t> column_optional_int64(int index) const;

    // Ready to run again with fresh bindings. Also ends the read this statement held open.
    void reset() noexcept;

    sqlite3_stmt* handle() const noexcept { return handle_; }

private:
    void remember(int code, int index) noexcept;

    sqlite3* db_ = nullptr;
    sqlite3_stmt* handle_ = nullptr;
    int bind_error_ = 0;
    int bind_error_index_ = 0;
};

// Borrowed use of a cached statement: resets it on destruction.
class statement_lease {
public:
    explicit statement_lease(statement& used) noexcept : statement_(&used) {}
    statement_lease(statement_lease&& other) noexcept : statement_(other.statement_) { other.statement_ = nullptr; }
    statement_lease& operator=(statement_lease&&) = delete;
    statement_lease(const statement_lease&) = delete;
    statement_lease& operator=(const statement_lease&) = delete;
    ~statement_lease() {
        if (statement_ != nullptr) statement_->reset();
    }

    statement* operator->() const noexcept { return statement_; }
    statement& operator*() const noexcept { return *statement_; }

private:
    statement* statement_;
};

}  // namespace wheelhouse::sqlite
