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

result<std::vector<audit_entry>> read_audit(sqlite::connection& db, std::int64_t limit,
                                            const std::optional<std::string>& target) {
    auto query = db.cached(
        "SELECT id, time_ms, actor, action, target, detail FROM audit_log WHERE ?2 IS NULL OR target = ?2 "
        "ORDER BY id DESC LIMIT ?1");
    if (!query) return query.error();
    (*query)->bind_int64(1, limit).bind_optional_text(2, target);
    std::vector<audit_entry> entries;
    for (;;) {
        auto row = (*query)->step();
        if (!row) return row.error();
        if (!*row) break;
        const auto& statement = **query;
        entries.push_back({statement.column_int64(0), statement.column_int64(1), statement.column_text(2),
                           statement.column_text(3), statement.column_text(4), statement.column_optional_text(5)});
    }
    return entries;
}

}  // namespace wheelhouse::catalog
