#include "wheelhouse/oidc/exchange.hpp"

#include <algorithm>
#include <map>

#include <boost/json.hpp>

#include "wheelhouse/catalog/audit.hpp"
#include "wheelhouse/crypto/hasher.hpp"
#include "wheelhouse/oidc/jwt.hpp"
#include "wheelhouse/text/quoted.hpp"

namespace wheelhouse::oidc {
namespace {

namespace json = boost::json;

constexpr std::array<std::string_view, exchange_outcome_count> outcome_names = {
    "minted", "invalid_token", "no_publisher", "replayed", "unavailable", "failed",
};

// Minted tokens are kept this long after they expire (token list, the admin page), then dropped;
// the audit log keeps what each was.
constexpr std::int64_t keep_expired_minted_ms = 7LL * 24 * 3600 * 1000;
// A spent jti is kept until its token could no longer be accepted, and a little more.
constexpr std::int64_t jti_margin_seconds = 5;

// Why no publisher matched: the mismatch of a publisher of the token's repository, else that none
// names the repository.
error nearest_miss(const std::vector<publisher>& candidates, const json::object& claims) {
    for (const auto& candidate : candidates) {
        if (!names_repository(candidate, claims)) continue;
        auto matched = match_claims(candidate, claims);
        return make_error(error_kind::forbidden, "valid token, but no trusted publisher matches: " +
                                                     matched.error().message + " (publisher " +
                                                     std::to_string(candidate.id) + " of " + candidate.project + ")");
    }
    const auto repository = string_claim(claims, "repository").value_or(string_claim(claims, "project_path").value_or(""));
    return make_error(error_kind::forbidden, "valid token, but no trusted publisher of this index names the repository " +
                                                 text::quoted(repository) + "; add one with `wheelhouse publisher add`");
}

// The projects the matched publishers cover, and per project what it may publish: nothing
// limited when no publisher limits its builds; else each publisher's pattern, '*' for one that
// does not limit.
void grant_of(const std::vector<publisher>& matched, auth::token_spec& spec) {
    std::map<std::string, std::vector<std::string>> patterns;
    for (const auto& one : matched) patterns[one.project].push_back(one.label_pattern.empty() ? "*" : one.label_pattern);
    const bool limited = std::any_of(matched.begin(), matched.end(), [](const publisher& one) { return !one.label_pattern.empty(); });
    for (auto& [project, labels] : patterns) {
        spec.project_patterns.push_back(project);
        if (!limited) continue;
        std::sort(labels.begin(), labels.end());
        labels.erase(std::unique(labels.begin(), labels.end()), labels.end());
        for (auto& label : labels) spec.build_limits.push_back({project, std::move(label)});
    }
}

// The publishers were read before the signature was checked; one removed since must not mint (its
// removal revoked what it had minted, and this token would escape that).
result<void> still_trusted(sqlite::connection& db, const std::vector<publisher>& matched) {
    auto query = db.cached("SELECT 1 FROM trusted_publishers WHERE id = ?1");
    if (!query) return query.error();
    for (const auto& one : matched) {
        (*query)->reset();
        (*query)->bind_int64(1, one.id);
        auto row = (*query)->step();
        if (!row) return row.error();
        if (!*row) {
            return make_error(error_kind::forbidden, "trusted publisher " + std::to_string(one.id) + " of " + one.project +
                                                         " was removed while the token was exchanged");
        }
    }
    return {};
}

result<void> forget_expired_minted(sqlite::connection& db, std::int64_t now_ms) {
    auto forget = db.cached("DELETE FROM tokens WHERE publisher_id IS NOT NULL AND expires_ms < ?1");
    if (!forget) return forget.error();
    (*forget)->bind_int64(1, now_ms - keep_expired_minted_ms);
    return (*forget)->run();
}

}  // namespace

std::string_view to_string(exchange_outcome outcome) noexcept { return outcome_names[static_cast<std::size_t>(outcome)]; }

exchange_outcome outcome_of(const result<minted_token>& exchanged) noexcept {
    if (exchanged) return exchange_outcome::minted;
    switch (exchanged.error().kind) {
        case error_kind::invalid: return exchange_outcome::invalid_token;
        case error_kind::forbidden: return exchange_outcome::no_publisher;
        case error_kind::conflict: return exchange_outcome::replayed;
        case error_kind::unavailable: return exchange_outcome::unavailable;
        default: return exchange_outcome::failed;
    }
}

token_exchange::token_exchange(auth::token_store& tokens, publisher_store& publishers, key_cache& keys,
                               exchange_settings settings)
    : tokens_(tokens), publishers_(publishers), keys_(keys), settings_(std::move(settings)) {}

std::int64_t token_exchange::now_seconds() const {
    if (settings_.now_seconds) return settings_.now_seconds();
    return catalog::now_ms() / 1000;
}

std::uint64_t token_exchange::count(exchange_outcome outcome) const noexcept {
    return outcomes_[static_cast<std::size_t>(outcome)].load(std::memory_order_relaxed);
}

std::chrono::seconds token_exchange::retry_after(std::string_view identity_token) const {
    auto token = parse_token(identity_token);
    auto issuer = token ? claimed_issuer(*token) : result<std::string>(invalid(""));
    return std::max(std::chrono::seconds(1), issuer ? keys_.wait_before_fetch(*issuer) : std::chrono::seconds(1));
}

result<minted_token> token_exchange::exchange(std::string_view identity_token) {
    auto exchanged = [&]() -> result<minted_token> {
        auto token = parse_token(identity_token);
        if (!token) return token.error();
        auto issuer = claimed_issuer(*token);
        if (!issuer) return issuer.error();
        // Only issuers some publisher names are ever fetched: a token cannot send the index elsewhere.
        auto candidates = publishers_.of_issuer(*issuer);
        if (!candidates) return candidates.error();
        if (candidates->empty()) {
            return make_error(error_kind::forbidden, "no trusted publisher of this index uses the issuer " +
                                                         text::quoted(*issuer) + "; add one with `wheelhouse publisher add`");
        }
        auto key = keys_.key_for(*issuer, token->key_id);
        if (!key) return key.error();
        auto verified = verify_token(*token, **key, {*issuer, settings_.audience, now_seconds(), settings_.leeway_seconds});
        if (!verified) return verified.error();
        std::vector<publisher> matched;
        std::copy_if(candidates->begin(), candidates->end(), std::back_inserter(matched),
                     [&](const publisher& one) { return static_cast<bool>(match_claims(one, verified->claims)); });
        if (matched.empty()) return nearest_miss(*candidates, verified->claims);
        return mint(matched, *verified);
    }();
    outcomes_[static_cast<std::size_t>(outcome_of(exchanged))].fetch_add(1, std::memory_order_relaxed);
    return exchanged;
}

result<minted_token> token_exchange::mint(const std::vector<publisher>& matched, const verified_token& token) {
    const auto& first = matched.front();
    auth::token_spec spec;
    // Unique per identity token (a jti is spent once), and says which publisher minted it.
    spec.name = "oidc-" + std::to_string(first.id) + "-" + crypto::sha256_hex(token.issuer + "\n" + token.token_id).substr(0, 12);
    spec.granted = auth::scope::upload;
    spec.lifetime = settings_.token_lifetime;
    spec.publisher_id = first.id;
    grant_of(matched, spec);
    json::array publisher_ids;
    for (const auto& one : matched) publisher_ids.push_back(one.id);
    json::object detail{{"publishers", publisher_ids}, {"issuer", token.issuer}, {"claims", audited_claims(first, token.claims)}};
    detail["projects"] = json::value_from(spec.project_patterns);
    spec.audit_action = "mint_token";
    spec.audit_detail = json::serialize(detail);

    const auto now_ms = now_seconds() * 1000;
    const auto spent_until_ms = (token.expires_seconds + settings_.leeway_seconds + jti_margin_seconds) * 1000;
    auto created = tokens_.create(spec, "oidc " + first.repository, [&](sqlite::connection& db) -> result<void> {
        if (auto trusted = still_trusted(db, matched); !trusted) return trusted;
        if (auto spent = claim_token_id(db, token.issuer, token.token_id, spent_until_ms, now_ms); !spent) return spent;
        return forget_expired_minted(db, now_ms);
    });
    if (!created) return created.error();
    minted_token minted;
    minted.secret = std::move(created->secret);
    minted.name = created->record.grant.name;
    minted.expires_seconds = created->record.expires_ms.value_or(0) / 1000;
    minted.projects = created->record.grant.project_patterns;
    return minted;
}

}  // namespace wheelhouse::oidc
