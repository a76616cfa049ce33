#pragma once
// The audit log: who changed what, and when. Written inside the transaction that makes the
// change, so the record and the change commit or roll back together.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "wheelhouse/result.hpp"
#include "wheelhouse/sqlite/connection.hpp"

namespace wheelhouse::catalog {

// Unix time in milliseconds, as every *_ms column holds it.
std::int64_t now_ms();

result<void> write_audit(sqlite::connection& db, std::string_view actor, std::string_view action,
                         std::string_view target, const std::optional<std::string>& detail);

struct audit_entry {
    std::int64_t id = 0;
    std::int64_t time_ms = 0;
    std::string actor;
    std::string action;
    std::string target;
    std::optional<std::string> detail;
};

// The newest `limit` entries, newest first; only those about `target` when one is given.
result<std::vector<audit_entry>> read_audit(sqlite::connection& db, std::int64_t limit,
                                            const std::optional<std::string>& target);

}  // namespace wheelhouse::catalog
