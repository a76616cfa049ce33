#include "wheelhouse/catalog/audit.hpp"

#include <array>
#include <chrono>

#include "wheelhouse/sqlite/columns.hpp"
#include "wheelhouse/sqlite/statement.hpp"
#include "wheelhouse/text/ascii.hpp"

namespace wheelhouse::catalog {

std::int64_t now_ms() {
    return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
        .count();
}

namespace {

// The audit log's columns after its id (sqlite/columns.hpp): the one place each is named.
constexpr std::array audit_columns = {
    sqlite::field<&audit_entry::time_ms>("time_ms"),
    sqlite::field<&audit_entry::actor>("actor"),
    sqlite::field<&audit_entry::action>("action"),
    sqlite::field<&audit_entry::target>("target"),
    sqlite::field<&audit_entry::detail>("detail"),
};

}  // namespace

result<void> write_audit(sqlite::connection& db, std::string_view actor, std::string_view action,
                         std::string_view target, const std::optional<std::string>& detail) {
    static const std::string insert_entry = "INSERT INTO audit_log (" + sqlite::column_list(audit_columns) +
                                            ") VALUES (" + sqlite::parameter_list(audit_columns, 1) + ")";
    auto insert = db.cached(insert_entry);
    if (!insert) return insert.error();
    const audit_entry entry{0, now_ms(), std::string(actor), std::string(action), std::string(target), detail};
    sqlite::bind_columns(**insert, 1, audit_columns, entry);
    return (*insert)->run();
}

namespace {

constexpr std::string_view audit_filters =
    " FROM audit_log WHERE (?1 IS NULL OR target = ?1) AND (?2 = '' OR actor = ?2) AND (?3 = '' OR action = ?3) "
    "AND (?4 = '' OR instr(lower(target), ?4) > 0 OR instr(lower(coalesce(detail, '')), ?4) > 0)";

void bind_filters(sqlite::statement& statement, const audit_query& query) {
    const std::string search = text::to_lower(query.search);
    statement.bind_optional_text(1, query.target).bind_text(2, query.actor).bind_text(3, query.action).bind_text(4, search);
}

}  // namespace

result<audit_page> read_audit(sqlite::connection& db, const audit_query& query) {
    if (query.page < 1) return invalid("page " + std::to_string(query.page) + " is before the first; pages start at 1");
    if (query.per_page < 1) return invalid("per_page must be at least 1");
    audit_page page;
    {
        auto count = db.cached("SELECT count(*)" + std::string(audit_filters));
        if (!count) return count.error();
        bind_filters(**count, query);
        auto row = (*count)->step();
        if (!row) return row.error();
        page.total = *row ? (*count)->column_int64(0) : 0;
    }
    static const std::string select_entries = "SELECT id, " + sqlite::column_list(audit_columns) +
                                              std::string(audit_filters) + " ORDER BY id DESC LIMIT ?5 OFFSET ?6";
    auto rows = db.cached(select_entries);
    if (!rows) return rows.error();
    bind_filters(**rows, query);
    (*rows)->bind_int64(5, query.per_page).bind_int64(6, (query.page - 1) * query.per_page);
    for (;;) {
        auto row = (*rows)->step();
        if (!row) return row.error();
        if (!*row) break;
        auto& entry = page.entries.emplace_back();
        entry.id = (*rows)->column_int64(0);
        sqlite::read_columns(**rows, 1, audit_columns, entry);
    }
    auto actions = db.cached("SELECT DISTINCT action FROM audit_log ORDER BY action");
    if (!actions) return actions.error();
    for (;;) {
        auto row = (*actions)->step();
        if (!row) return row.error();
        if (!*row) break;
        page.actions.push_back((*actions)->column_text(0));
    }
    return page;
}

}  // namespace wheelhouse::catalog
