#include "wheelhouse/catalog/audit.hpp"

#include <chrono>

#include "wheelhouse/sqlite/statement.hpp"

namespace wheelhouse::catalog {

std::int64_t now_ms() {
    return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
        .count();
}

result<void> write_audit(sqlite::connection& db, std::string_view actor, std::string_view action,
                         std::string_view target, const std::optional<std::string>& detail) {
    auto insert = db.cached("INSERT INTO audit_log (time_ms, actor, action, target, detail) VALUES (?1, ?2, ?3, ?4, ?5)");
    if (!insert) return insert.error();
    (*insert)->bind_int64(1, now_ms()).bind_text(2, actor).bind_text(3, action).bind_text(4, target).bind_optional_text(5, detail);
    return (*insert)->run();
}

}  // namespace wheelhouse::catalog
