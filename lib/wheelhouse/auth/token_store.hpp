#pragma once
// API tokens as the catalog keeps them: only a hash of each secret, its scope, the projects it
// may touch, and its life (created, expires, revoked, last used).
//
// Checks are answered from memory: a cache keyed by the secret's hash, so a --private read does
// no SQL. It is dropped whole when this store creates or revokes a token, and when the catalog
// has seen another process commit (`wheelhouse token revoke --data …` beside a running server):
// every cached answer first asks the catalog, which costs no SQL read and never waits. While a
// write holds the catalog, a check reads the database as it did before. A grant's expiry is
// checked at each use; a refusal is kept for refusal_lifetime at most. Grants and refusals are
// kept apart: a flood of made-up secrets fills and empties only the refusals, never pushing a
// real token's grant out to be read from the database again.
//
// Thread safety: every member may be called from any thread (the catalog serialises writes).

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "wheelhouse/auth/scope.hpp"
#include "wheelhouse/catalog/catalog.hpp"
#include "wheelhouse/result.hpp"

namespace wheelhouse::auth {

struct token_record {
    std::int64_t id = 0;
    token_grant grant;  // name, scope, project patterns (empty: every project), build limits, minting publisher
    std::int64_t created_ms = 0;
    std::optional<std::int64_t> expires_ms;
    std::optional<std::int64_t> revoked_ms;
    std::optional<std::int64_t> last_used_ms;

    bool usable_at(std::int64_t now_ms) const noexcept {
        return !revoked_ms && (!expires_ms || now_ms < *expires_ms);
    }
};

struct created_token {
    token_record record;
    std::string secret;  // shown to the person once; never stored
};

// The refusal of a request whose token was good at its headers and is no longer (401).
error revoked_on_the_way();

// A token to make: what create() and a trusted publisher's exchange (oidc/exchange.hpp) give.
struct token_spec {
    std::string name;
    scope granted = scope::upload;
    std::vector<std::string> project_patterns;  // as --project gives them (normalised by create)
    std::vector<build_limit> build_limits;      // patterns as normalize_label_pattern gives them
    std::optional<std::chrono::seconds> lifetime;
    std::optional<std::int64_t> publisher_id;
    // The audit entry: "create_token" with the scope and projects, unless the caller says more.
    std::string audit_action = "create_token";
    std::optional<std::string> audit_detail;
};

class token_store {
public:
    static constexpr std::chrono::seconds refusal_lifetime{2};
    // Past it, that kind of answer (grants, or refusals) starts again empty.
    static constexpr std::size_t max_cached_checks = 4096;

    explicit token_store(catalog::catalog& catalog) noexcept : catalog_(catalog) {}

    // `patterns` as --project gives them (normalised here). conflict when the name is taken.
    result<created_token> create(std::string_view name, scope granted, const std::vector<std::string>& patterns,
                                 std::optional<std::chrono::seconds> lifetime, std::string_view actor);
    // The same from a whole spec; `in_same_transaction`, when given, runs first in the
    // transaction that inserts the token (a trusted publisher's exchange spends its identity
    // token's id there), and an error from it leaves no token.
    using transaction_work = std::function<result<void>(sqlite::connection&)>;
    result<created_token> create(const token_spec& spec, std::string_view actor,
                                 const transaction_work& in_same_transaction = {});
    // Drops every check answered from memory: after a write to the tokens table made outside
    // this store (a trusted publisher removed, its tokens revoked in that transaction).
    void forget_checks() const;
    result<std::vector<token_record>> list() const;
    // not_found for an unknown name; revoking twice keeps the first time.
    result<token_record> revoke(std::string_view name, std::string_view actor);

    // The grant of the token whose secret this is. unauthorized, with one message for unknown,
    // expired and revoked alike, so a prober learns nothing.
    result<token_grant> authenticate(std::string_view secret) const;
    // authenticate()'s answer and, when it refuses, why for the server's log, which may say what
    // the client must not learn: which of unknown, expired or revoked, and the token's name.
    struct check_result {
        result<token_grant> grant;
        std::string refusal;  // never the secret
    };
    check_result check(std::string_view secret) const;
    // Records that the token was used now (for `token list` and the admin page).
    result<void> mark_used(std::string_view name);
    // The same, inside a write transaction of the caller's.
    static result<void> mark_used(sqlite::connection& db, std::string_view name);
    // The same, once more checking in that transaction that the token is neither revoked nor
    // expired, revoked_on_the_way() if it is: a change checked at its headers commits only if
    // the token is still good when it does (a token revoked while an upload's body arrived
    // stores nothing).
    static result<void> confirm_and_mark_used(sqlite::connection& db, std::string_view name);

    // Checks answered from memory and from the database, since the store was made.
    struct cache_statistics {
        std::uint64_t hits = 0;
        std::uint64_t lookups = 0;
    };
    cache_statistics cache_stats() const;

private:
    struct cached_check {
        check_result answer;
        std::optional<std::int64_t> expires_ms;  // the grant's
        std::int64_t refusal_until_ms = 0;       // for a refusal: when to ask again (0: never kept)
    };
    cached_check look_up(const std::string& hash) const;  // in the database
    // The answer cached for `hash` while still current, from either map; under cache_mutex_.
    const check_result* cached_answer(const std::string& hash) const;

    catalog::catalog& catalog_;
    mutable std::mutex cache_mutex_;
    mutable std::unordered_map<std::string, cached_check> grants_;    // by the secret's hash
    mutable std::unordered_map<std::string, cached_check> refusals_;  // likewise
    mutable std::uint64_t generation_ = 0;        // moves each time both maps are dropped
    mutable std::uint64_t external_changes_ = 0;  // the catalog's count, when the maps were last trusted
    mutable std::atomic<std::uint64_t> hits_{0};
    mutable std::atomic<std::uint64_t> lookups_{0};
};

}  // namespace wheelhouse::auth
