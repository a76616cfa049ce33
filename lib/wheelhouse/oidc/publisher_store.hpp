#pragma once
// The trusted publishers in the catalog (schema/0009), and the identity tokens already
// exchanged. Every change is audited in the transaction that makes it; removing a publisher
// revokes the upload tokens it minted that have not expired, in the same transaction.
//
// Thread safety: every member may be called from any thread (the catalog serialises writes).

#include <atomic>
#include <cstdint>
#include <string_view>
#include <vector>

#include "wheelhouse/auth/token_store.hpp"
#include "wheelhouse/catalog/catalog.hpp"
#include "wheelhouse/oidc/publisher.hpp"
#include "wheelhouse/result.hpp"

namespace wheelhouse::oidc {

class publisher_store {
public:
    publisher_store(catalog::catalog& catalog, auth::token_store& tokens) noexcept : catalog_(catalog), tokens_(tokens) {}

    // Normalises `draft` (normalize_publisher) and adds it; conflict when the project already
    // trusts the same issuer, repository, workflow, environment and label pattern.
    result<publisher> add(const publisher& draft, std::string_view actor);
    // Every publisher, or those of `project` (normalised here), by project then id.
    result<std::vector<publisher>> list(std::string_view project = {}) const;
    // Publisher `id`; nullopt when there is none (removed since it minted a token).
    result<std::optional<publisher>> find(std::int64_t id) const;
    // Those whose tokens come from `issuer`: the candidates for a token's claims.
    result<std::vector<publisher>> of_issuer(std::string_view issuer) const;

    struct removal {
        publisher removed;
        std::int64_t tokens_revoked = 0;  // minted by it and not yet expired
    };
    // Removes publisher `id` of `project`; not_found when that project has no such publisher
    // (an id of another project's is not found either, so a token limited to one project
    // cannot remove another's).
    result<removal> remove(std::int64_t id, std::string_view project, std::string_view actor);

    result<std::int64_t> count() const;

    // Publishers this store added and removed since it was made (for /metrics).
    struct statistics {
        std::uint64_t added = 0;
        std::uint64_t removed = 0;
    };
    statistics stats() const noexcept;

private:
    catalog::catalog& catalog_;
    auth::token_store& tokens_;
    std::atomic<std::uint64_t> added_{0};
    std::atomic<std::uint64_t> removed_{0};
};

// Records that the identity token `token_id` of `issuer` has been exchanged, inside the caller's
// write transaction, and forgets those that expired before `now_ms`. conflict when it was
// exchanged before: each token is accepted once.
result<void> claim_token_id(sqlite::connection& db, std::string_view issuer, std::string_view token_id,
                            std::int64_t expires_ms, std::int64_t now_ms);

}  // namespace wheelhouse::oidc
