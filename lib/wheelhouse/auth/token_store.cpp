#include "wheelhouse/auth/token_store.hpp"

#include <boost/json.hpp>

#include "wheelhouse/auth/token.hpp"
#include "wheelhouse/catalog/audit.hpp"
#include "wheelhouse/sqlite/statement.hpp"

namespace wheelhouse::auth {
namespace {

constexpr std::string_view select_tokens =
    "SELECT id, name, scope, projects, created_ms, expires_ms, revoked_ms, last_used_ms, secret_sha256, builds, "
    "publisher_id FROM tokens ";

std::string patterns_json(const std::vector<std::string>& patterns) {
    boost::json::array list;
    if (patterns.empty()) list.emplace_back("*");
    for (const auto& pattern : patterns) list.emplace_back(pattern);
    return boost::json::serialize(list);
}

std::vector<std::string> patterns_from_json(const std::string& text) {
    std::vector<std::string> patterns;
    boost::system::error_code ec;
    const auto parsed = boost::json::parse(text, ec);
    if (ec || !parsed.is_array()) return {"-unreadable-"};  // matches no project: fail closed
    for (const auto& item : parsed.as_array()) {
        if (item.is_string()) patterns.emplace_back(item.as_string());
    }
    if (patterns.size() == 1 && patterns.front() == "*") patterns.clear();
    return patterns;
}

// [{"project": "flash-attn", "labels": "cu130*"}, ...]; NULL when the token may publish any build.
std::optional<std::string> builds_json(const std::vector<build_limit>& limits) {
    if (limits.empty()) return std::nullopt;
    boost::json::array list;
    for (const auto& limit : limits) list.push_back(boost::json::object{{"project", limit.project}, {"labels", limit.label_pattern}});
    return boost::json::serialize(list);
}

std::vector<build_limit> builds_from_json(const std::optional<std::string>& text) {
    if (!text) return {};
    // Unreadable: a limit no file meets, so the token publishes nothing (fails closed).
    const std::vector<build_limit> nothing{{"", ""}};
    boost::system::error_code ec;
    const auto parsed = boost::json::parse(*text, ec);
    if (ec || !parsed.is_array() || parsed.as_array().empty()) return nothing;
    std::vector<build_limit> limits;
    for (const auto& item : parsed.as_array()) {
        const auto* project = item.is_object() ? item.as_object().if_contains("project") : nullptr;
        const auto* labels = item.is_object() ? item.as_object().if_contains("labels") : nullptr;
        if (!project || !labels || !project->is_string() || !labels->is_string()) return nothing;
        limits.push_back({std::string(project->as_string()), std::string(labels->as_string())});
    }
    return limits;
}
token_record read_token(const sqlite::statement& row) {
    token_record record;
    record.id = row.column_int64(0);
    record.grant.name = row.column_text(1);
    const auto granted = parse_scope(row.column_text(2));  // the schema's CHECK allows only valid scopes
    record.grant.granted = granted ? *granted : scope::read;
    record.grant.project_patterns = patterns_from_json(row.column_text(3));
    record.created_ms = row.column_int64(4);
    record.expires_ms = row.column_optional_int64(5);
    record.revoked_ms = row.column_optional_int64(6);
    record.last_used_ms = row.column_optional_int64(7);
    record.grant.build_limits = builds_from_json(row.column_optional_text(9));
    record.grant.publisher_id = row.column_optional_int64(10);
    return record;
}

result<std::optional<token_record>> find_by_name(sqlite::connection& db, std::string_view name) {
    auto query = db.cached(std::string(select_tokens) + "WHERE name = ?1");
    if (!query) return query.error();
    (*query)->bind_text(1, name);
    auto row = (*query)->step();
    if (!row) return row.error();
    if (!*row) return std::optional<token_record>();
    return std::optional(read_token(**query));
}

// One message for unknown, expired and revoked alike, so a prober learns nothing.
error refused_token() {
    return make_error(error_kind::unauthorized,
                      "the token is not valid here (unknown, expired or revoked); ask an admin for one "
                      "made with `wheelhouse token create`");
}

bool is_valid_token_name(std::string_view name) {
    if (name.empty() || name.size() > 100) return false;
    for (char c : name) {
        const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
                        c == '_' || c == '.';
        if (!ok) return false;
    }
    return true;
}

}  // namespace

result<created_token> token_store::create(std::string_view name, scope granted, const std::vector<std::string>& patterns,
                                          std::optional<std::chrono::seconds> lifetime, std::string_view actor) {
    token_spec spec;
    spec.name = std::string(name);
    spec.granted = granted;
    spec.project_patterns = patterns;
    spec.lifetime = lifetime;
    return create(spec, actor);
}

result<created_token> token_store::create(const token_spec& spec, std::string_view actor,
                                          const transaction_work& in_same_transaction) {
    const std::string_view name = spec.name;
    if (!is_valid_token_name(name))
        return invalid("token name '" + std::string(name) + "' must be 1-100 letters, digits, '-', '_' or '.'");
    std::vector<std::string> normalized;
    for (const auto& pattern : spec.project_patterns) {
        auto checked = normalize_project_pattern(pattern);
        if (!checked) return checked.error();
        normalized.push_back(std::move(*checked));
    }
    auto secret = generate_token();
    if (!secret) return secret.error();

    created_token created;
    created.secret = secret->token;
    auto written = catalog_.write_transaction([&](sqlite::connection& db) -> result<void> {
        // First, so its refusal (a spent identity token) is the one told.
        if (in_same_transaction) {
            if (auto done = in_same_transaction(db); !done) return done.error();
        }
        auto existing = find_by_name(db, name);
        if (!existing) return existing.error();
        if (*existing)
            return make_error(error_kind::conflict, "a token named '" + std::string(name) +
                                                        "' exists already; choose another name or revoke it first");
        const auto now = catalog::now_ms();
        std::optional<std::int64_t> expires;
        if (spec.lifetime) expires = now + std::chrono::duration_cast<std::chrono::milliseconds>(*spec.lifetime).count();
        auto insert = db.cached(
            "INSERT INTO tokens (name, secret_sha256, scope, projects, created_ms, expires_ms, builds, publisher_id) "
            "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)");
        if (!insert) return insert.error();
        (*insert)->bind_text(1, name).bind_text(2, secret->hash).bind_text(3, to_string(spec.granted))
            .bind_text(4, patterns_json(normalized)).bind_int64(5, now).bind_optional_int64(6, expires)
            .bind_optional_text(7, builds_json(spec.build_limits)).bind_optional_int64(8, spec.publisher_id);
        if (auto done = (*insert)->run(); !done) return done.error();
        const std::string detail =
            spec.audit_detail.value_or(std::string(to_string(spec.granted)) + " " + patterns_json(normalized));
        if (auto audited = catalog::write_audit(db, actor, spec.audit_action, name, detail); !audited) return audited.error();
        auto row = find_by_name(db, name);
        if (!row) return row.error();
        created.record = std::move(**row);
        return {};
    });
    if (!written) return written.error();
    forget_checks();
    return created;
}

result<std::vector<token_record>> token_store::list() const {
    std::vector<token_record> records;
    auto read = catalog_.read_snapshot([&](sqlite::connection& db) -> result<void> {
        auto query = db.cached(std::string(select_tokens) + "ORDER BY name");
        if (!query) return query.error();
        for (;;) {
            auto row = (*query)->step();
            if (!row) return row.error();
            if (!*row) return {};
            records.push_back(read_token(**query));
        }
    });
    if (!read) return read.error();
    return records;
}

result<token_record> token_store::revoke(std::string_view name, std::string_view actor) {
    token_record revoked;
    auto written = catalog_.write_transaction([&](sqlite::connection& db) -> result<void> {
        auto update = db.cached("UPDATE tokens SET revoked_ms = ?2 WHERE name = ?1 AND revoked_ms IS NULL");
        if (!update) return update.error();
        (*update)->bind_text(1, name).bind_int64(2, catalog::now_ms());
        if (auto done = (*update)->run(); !done) return done.error();
        auto row = find_by_name(db, name);
        if (!row) return row.error();
        if (!*row) return make_error(error_kind::not_found, "no token named '" + std::string(name) + "'");
        if (auto audited = catalog::write_audit(db, actor, "revoke_token", name, std::nullopt); !audited)
            return audited.error();
        revoked = std::move(**row);
        return {};
    });
    forget_checks();  // before the revoke is answered: no later request passes with it
    if (!written) return written.error();
    return revoked;
}

token_store::check_result token_store::check(std::string_view secret) const {
    if (!looks_like_token(secret)) {
        // A fixed prefix is no secret, and tells an admin what CI is sending instead.
        const auto* refusal = secret.starts_with("pypi-") ? "a PyPI token (pypi-...), not a wheelhouse one"
                                                          : "not shaped like a wheelhouse token (wh_...)";
        return {make_error(error_kind::unauthorized,
                           "that is not a wheelhouse token (they start with 'wh_'); use one made with "
                           "`wheelhouse token create` as the password, with the username __token__"),
                refusal};
    }
    const auto hash = hash_secret(secret);
    if (hash.empty()) return {refused_token(), "the token could not be hashed"};
    // Asked before the cache, so a revoke another process committed is seen before any answer.
    const auto changes = catalog_.external_changes();
    std::uint64_t generation = 0;
    {
        std::lock_guard lock(cache_mutex_);
        if (changes && *changes > external_changes_) {
            grants_.clear();
            refusals_.clear();
            ++generation_;
            external_changes_ = *changes;
        }
        generation = generation_;
        if (const auto* answer = changes ? cached_answer(hash) : nullptr) {
            hits_.fetch_add(1, std::memory_order_relaxed);
            return *answer;
        }
    }
    lookups_.fetch_add(1, std::memory_order_relaxed);
    auto entry = look_up(hash);
    std::lock_guard lock(cache_mutex_);
    // A token created, revoked or changed elsewhere while this read ran: its answer may be stale.
    // A failed read is never kept (refusal_until_ms 0): the next check reads again.
    if (generation == generation_ && (entry.answer.grant || entry.refusal_until_ms != 0)) {
        auto& kept = entry.answer.grant ? grants_ : refusals_;
        if (kept.size() >= max_cached_checks) kept.clear();
        kept.insert_or_assign(hash, entry);
    }
    return entry.answer;
}

token_store::cached_check token_store::look_up(const std::string& hash) const {
    std::optional<token_record> found;
    std::string stored_hash;
    auto read = catalog_.read_snapshot([&](sqlite::connection& db) -> result<void> {
        auto query = db.cached(std::string(select_tokens) + "WHERE secret_sha256 = ?1");
        if (!query) return query.error();
        (*query)->bind_text(1, hash);
        auto row = (*query)->step();
        if (!row) return row.error();
        if (*row) {
            found = read_token(**query);
            stored_hash = (*query)->column_text(8);
        }
        return {};
    });
    const auto now = catalog::now_ms();
    const auto refusal = [&](check_result answer) {
        return cached_check{std::move(answer), std::nullopt, now + std::chrono::milliseconds(refusal_lifetime).count()};
    };
    if (!read) return {{read.error(), "the tokens could not be read: " + read.error().message}, std::nullopt, 0};
    // The index found the row; the comparison that decides is constant-time all the same.
    if (!found || !constant_time_equal(stored_hash, hash)) return refusal({refused_token(), "unknown wheelhouse token"});
    if (found->revoked_ms) return refusal({refused_token(), "token '" + found->grant.name + "' is revoked"});
    if (!found->usable_at(now)) return refusal({refused_token(), "token '" + found->grant.name + "' has expired"});
    return {{found->grant, {}}, found->expires_ms, 0};
}

const token_store::check_result* token_store::cached_answer(const std::string& hash) const {
    const auto now = catalog::now_ms();
    if (auto found = grants_.find(hash); found != grants_.end()) {
        if (!found->second.expires_ms || now < *found->second.expires_ms) return &found->second.answer;
        grants_.erase(found);
    }
    if (auto found = refusals_.find(hash); found != refusals_.end()) {
        if (now < found->second.refusal_until_ms) return &found->second.answer;
        refusals_.erase(found);
    }
    return nullptr;
}

void token_store::forget_checks() const {
    std::lock_guard lock(cache_mutex_);
    grants_.clear();
    refusals_.clear();
    ++generation_;
}

token_store::cache_statistics token_store::cache_stats() const {
    return {hits_.load(std::memory_order_relaxed), lookups_.load(std::memory_order_relaxed)};
}

result<token_grant> token_store::authenticate(std::string_view secret) const { return check(secret).grant; }

result<void> token_store::mark_used(std::string_view name) {
    return catalog_.write_transaction([&](sqlite::connection& db) { return mark_used(db, name); });
}

result<void> token_store::mark_used(sqlite::connection& db, std::string_view name) {
    auto update = db.cached("UPDATE tokens SET last_used_ms = ?2 WHERE name = ?1");
    if (!update) return update.error();
    (*update)->bind_text(1, name).bind_int64(2, catalog::now_ms());
    return (*update)->run();
}

error revoked_on_the_way() {
    return make_error(error_kind::unauthorized,
                      "the token was revoked or expired while the request was on its way: nothing was done; "
                      "ask an admin for a new token");
}

result<void> token_store::confirm_and_mark_used(sqlite::connection& db, std::string_view name) {
    auto update = db.cached(
        "UPDATE tokens SET last_used_ms = ?2 WHERE name = ?1 AND revoked_ms IS NULL AND "
        "(expires_ms IS NULL OR expires_ms > ?2) RETURNING id");
    if (!update) return update.error();
    (*update)->bind_text(1, name).bind_int64(2, catalog::now_ms());
    auto updated = (*update)->step();
    if (!updated) return updated.error();
    if (*updated) return {};
    return revoked_on_the_way();
}

}  // namespace wheelhouse::auth
