#include "wheelhouse/oidc/publisher_store.hpp"

#include <array>

#include "wheelhouse/catalog/audit.hpp"
#include "wheelhouse/pep503/name.hpp"
#include "wheelhouse/sqlite/columns.hpp"

namespace wheelhouse::oidc {

// A kind as the schema spells it; found by argument-dependent lookup from sqlite::field, so not
// in the unnamed namespace.
void bind_value(sqlite::statement& query, int parameter, publisher_kind kind) { query.bind_text(parameter, to_string(kind)); }
void read_value(const sqlite::statement& row, int index, publisher_kind& kind) {
    // The schema's CHECK allows only the two spellings.
    kind = row.column_text(index) == "gitlab" ? publisher_kind::gitlab : publisher_kind::github;
}

namespace {

// Each column of trusted_publishers, named once.
constexpr std::array publisher_columns = {
    sqlite::field<&publisher::project>("project"),
    sqlite::field<&publisher::kind>("kind"),
    sqlite::field<&publisher::issuer>("issuer"),
    sqlite::field<&publisher::repository>("repository"),
    sqlite::field<&publisher::owner_id>("owner_id"),
    sqlite::field<&publisher::workflow>("workflow"),
    sqlite::field<&publisher::environment>("environment"),
    sqlite::field<&publisher::label_pattern>("label_pattern"),
    sqlite::field<&publisher::created_ms>("created_ms"),
    sqlite::field<&publisher::created_by>("created_by"),
};

const std::string& select_publishers() {
    static const std::string sql = "SELECT id, " + sqlite::column_list(publisher_columns) + " FROM trusted_publishers ";
    return sql;
}

result<std::vector<publisher>> read_all(sqlite::statement& query) {
    std::vector<publisher> found;
    for (;;) {
        auto row = query.step();
        if (!row) return row.error();
        if (!*row) return found;
        publisher one;
        one.id = query.column_int64(0);
        sqlite::read_columns(query, 1, publisher_columns, one);
        found.push_back(std::move(one));
    }
}

// The publishers a WHERE clause of one text parameter (?1) picks, from one snapshot.
result<std::vector<publisher>> read_where(const catalog::catalog& catalog, std::string_view where,
                                          std::string_view value) {
    std::vector<publisher> found;
    auto read = catalog.read_snapshot([&](sqlite::connection& db) -> result<void> {
        auto query = db.cached(select_publishers() + std::string(where));
        if (!query) return query.error();
        (*query)->bind_text(1, value);
        auto rows = read_all(**query);
        if (!rows) return rows.error();
        found = std::move(*rows);
        return {};
    });
    if (!read) return read.error();
    return found;
}

}  // namespace

result<publisher> publisher_store::add(const publisher& draft, std::string_view actor) {
    auto added = normalize_publisher(draft);
    if (!added) return added.error();
    added->created_ms = catalog::now_ms();
    added->created_by = std::string(actor);
    auto written = catalog_.write_transaction([&](sqlite::connection& db) -> result<void> {
        static const std::string insert = "INSERT INTO trusted_publishers (" + sqlite::column_list(publisher_columns) +
                                          ") VALUES (" + sqlite::parameter_list(publisher_columns, 1) +
                                          ") ON CONFLICT DO NOTHING RETURNING id";
        auto query = db.cached(insert);
        if (!query) return query.error();
        sqlite::bind_columns(**query, 1, publisher_columns, *added);
        auto row = (*query)->step();
        if (!row) return row.error();
        if (!*row) {
            return make_error(error_kind::conflict, "project '" + added->project + "' already trusts " + describe(*added));
        }
        added->id = (*query)->column_int64(0);
        return catalog::write_audit(db, actor, "add_publisher", added->project,
                                    "publisher " + std::to_string(added->id) + ": " + describe(*added));
    });
    if (!written) return written.error();
    added_.fetch_add(1, std::memory_order_relaxed);
    return added;
}

result<std::vector<publisher>> publisher_store::list(std::string_view project) const {
    const std::string normalized = project.empty() ? std::string() : pep503::normalize(project);
    return read_where(catalog_, "WHERE ?1 = '' OR project = ?1 ORDER BY project, id", normalized);
}

result<std::optional<publisher>> publisher_store::find(std::int64_t id) const {
    auto found = read_where(catalog_, "WHERE id = CAST(?1 AS INTEGER)", std::to_string(id));
    if (!found) return found.error();
    if (found->empty()) return std::optional<publisher>();
    return std::optional<publisher>(std::move(found->front()));
}

result<std::vector<publisher>> publisher_store::of_issuer(std::string_view issuer) const {
    return read_where(catalog_, "WHERE issuer = ?1 ORDER BY id", issuer);
}

result<publisher_store::removal> publisher_store::remove(std::int64_t id, std::string_view project, std::string_view actor) {
    removal done;
    const std::string normalized = pep503::normalize(project);
    auto written = catalog_.write_transaction([&](sqlite::connection& db) -> result<void> {
        auto query = db.cached(select_publishers() + "WHERE id = ?1 AND project = ?2");
        if (!query) return query.error();
        (*query)->bind_int64(1, id).bind_text(2, normalized);
        auto rows = read_all(**query);
        if (!rows) return rows.error();
        if (rows->empty()) {
            return make_error(error_kind::not_found, "project '" + normalized + "' has no trusted publisher " +
                                                         std::to_string(id) + "; `wheelhouse publisher list` shows them");
        }
        done.removed = std::move(rows->front());
        const auto now = catalog::now_ms();
        auto revoke = db.cached("UPDATE tokens SET revoked_ms = ?2 WHERE publisher_id = ?1 AND revoked_ms IS NULL "
                                "AND (expires_ms IS NULL OR expires_ms > ?2) RETURNING id");
        if (!revoke) return revoke.error();
        (*revoke)->bind_int64(1, id).bind_int64(2, now);
        for (;;) {
            auto row = (*revoke)->step();
            if (!row) return row.error();
            if (!*row) break;
            ++done.tokens_revoked;
        }
        auto erase = db.cached("DELETE FROM trusted_publishers WHERE id = ?1");
        if (!erase) return erase.error();
        (*erase)->bind_int64(1, id);
        if (auto erased = (*erase)->run(); !erased) return erased.error();
        return catalog::write_audit(db, actor, "remove_publisher", normalized,
                                    "publisher " + std::to_string(id) + ": " + describe(done.removed) + "; " +
                                        std::to_string(done.tokens_revoked) + " unexpired tokens it minted revoked");
    });
    tokens_.forget_checks();  // before the removal is answered: its tokens fail from the next request on
    if (!written) return written.error();
    removed_.fetch_add(1, std::memory_order_relaxed);
    return done;
}

publisher_store::statistics publisher_store::stats() const noexcept {
    return {added_.load(std::memory_order_relaxed), removed_.load(std::memory_order_relaxed)};
}

result<std::int64_t> publisher_store::count() const {
    std::int64_t total = 0;
    auto read = catalog_.read_snapshot([&](sqlite::connection& db) -> result<void> {
        auto counted = db.query_int64("SELECT count(*) FROM trusted_publishers");
        if (!counted) return counted.error();
        total = *counted;
        return {};
    });
    if (!read) return read.error();
    return total;
}

result<void> claim_token_id(sqlite::connection& db, std::string_view issuer, std::string_view token_id,
                            std::int64_t expires_ms, std::int64_t now_ms) {
    auto forget = db.cached("DELETE FROM oidc_token_ids WHERE expires_ms < ?1");
    if (!forget) return forget.error();
    (*forget)->bind_int64(1, now_ms);
    if (auto forgotten = (*forget)->run(); !forgotten) return forgotten.error();
    auto claim = db.cached("INSERT INTO oidc_token_ids (issuer, jti, expires_ms) VALUES (?1, ?2, ?3) "
                           "ON CONFLICT DO NOTHING RETURNING 1");
    if (!claim) return claim.error();
    (*claim)->bind_text(1, issuer).bind_text(2, token_id).bind_int64(3, expires_ms);
    auto inserted = (*claim)->step();
    if (!inserted) return inserted.error();
    if (!*inserted) {
        return make_error(error_kind::conflict, "the identity token was exchanged before (its \"jti\" is spent); each "
                                                "is accepted once: request a new one");
    }
    return {};
}

}  // namespace wheelhouse::oidc
