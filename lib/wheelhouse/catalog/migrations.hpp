#pragma once
// The schema migrations compiled into the binary from schema/NNNN_*.sql, and the runner that
// brings a database up to date at start-up (PRAGMA user_version counts the applied ones).

#include <cstdint>
#include <span>
#include <string_view>

#include "wheelhouse/result.hpp"

namespace wheelhouse::sqlite {
class connection;
}

namespace wheelhouse::catalog {

struct migration {
    std::int64_t number;    // 1, 2, 3, ... as in the file name
    std::string_view name;  // "0001_init.sql"
    std::string_view sql;
};

// In number order, numbered from 1 without gaps (checked when the build embeds them).
std::span<const migration> built_in_migrations() noexcept;

// Applies each of `migrations` whose number is above the database's user_version, each in its
// own IMMEDIATE transaction that also sets user_version, so two processes starting together
// apply each migration once. Refuses a database whose user_version is newer than the last of
// `migrations`: this binary would not understand it. Returns the version the database is at.
result<std::int64_t> migrate(sqlite::connection& db, std::span<const migration> migrations = built_in_migrations());

}  // namespace wheelhouse::catalog
