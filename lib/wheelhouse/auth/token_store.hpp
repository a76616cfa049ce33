#pragma once
// API tokens as the catalog keeps them: only a hash of each secret, its scope, the projects it
// may touch, and its life (created, expires, revoked, last used).
//
// Thread safety: every member may be called from any thread (the catalog serialises writes).

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "wheelhouse/auth/scope.hpp"
#include "wheelhouse/catalog/catalog.hpp"
#include "wheelhouse/result.hpp"

namespace wheelhouse::auth {

struct token_record {
    std::int64_t id = 0;
    token_grant grant;  // name, scope, project patterns (empty: every project)
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

class token_store {
public:
    explicit token_store(catalog::catalog& catalog) noexcept : catalog_(catalog) {}

    // `patterns` as --project gives them (normalised here). conflict when the name is taken.
    result<created_token> create(std::string_view name, scope granted, const std::vector<std::string>& patterns,
                                 std::optional<std::chrono::seconds> lifetime, std::string_view actor);
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
    // The same, inside a write transaction of the caller's (an upload's commit shares it).
    static result<void> mark_used(sqlite::connection& db, std::string_view name);

private:
    catalog::catalog& catalog_;
};

}  // namespace wheelhouse::auth
