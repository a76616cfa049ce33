#pragma once
// The audit log: who changed what, and when. Written inside the transaction that makes the
// change, so the record and the change commit or roll back together.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "wheelhouse/result.hpp"
#include "wheelhouse/sqlite/connection.hpp"

namespace wheelhouse::catalog {

// Unix time in milliseconds, as every *_ms column holds it.
std::int64_t now_ms();

result<void> write_audit(sqlite::connection& db, std::string_view actor, std::string_view action,
                         std::string_view target, const std::optional<std::string>& detail);

}  // namespace wheelhouse::catalog
