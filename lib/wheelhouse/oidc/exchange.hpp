#pragma once
// The trusted-publishing exchange (PyPI's /_/oidc/mint-token, PEP 807's token minting): a CI
// identity token in, a short-lived upload token out, limited to the projects whose trusted
// publishers the token's claims match and to those publishers' label patterns. The order is
// Warehouse's (warehouse/oidc/views.py): read the token unverified only to learn its issuer; if
// some publisher trusts that issuer, check the signature with the issuer's key and the
// registered claims; match the publishers; spend the jti; mint. The spent jti, the token and
// the audit entry commit together, so a token is minted once or not at all.
//
// Errors, by kind (the route turns them into PyPI's answer shapes):
//   invalid      the token is malformed, its signature fails, or a registered claim is wrong
//   forbidden    a valid token no trusted publisher of this index matches (the nearest miss said)
//   conflict     the token was exchanged before
//   unavailable  the issuer's keys cannot be had now (its Retry-After from retry_after())
//   internal     our own fault
//
// Thread safety: exchange() may be called from any number of threads; it blocks while an
// issuer's keys are fetched (run it on the outbound lane).

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "wheelhouse/auth/token_store.hpp"
#include "wheelhouse/oidc/key_cache.hpp"
#include "wheelhouse/oidc/publisher_store.hpp"
#include "wheelhouse/oidc/verifier.hpp"
#include "wheelhouse/result.hpp"

namespace wheelhouse::oidc {

// PEP 807: an upload credential lives at least 15 minutes and at most 6 hours.
inline constexpr std::chrono::seconds min_token_lifetime{900};
inline constexpr std::chrono::seconds max_token_lifetime{6 * 3600};

struct exchange_settings {
    std::string audience = "wheelhouse";           // the one "aud" a token must carry
    std::chrono::seconds token_lifetime{900};      // of the minted token
    std::int64_t leeway_seconds = 30;              // on exp, iat and nbf
    std::function<std::int64_t()> now_seconds;     // Unix time; the system clock when empty
};

struct minted_token {
    std::string secret;             // the upload token: shown to the CI job once, never stored
    std::string name;               // its name in `wheelhouse token list` and as uploader
    std::int64_t expires_seconds = 0;
    std::vector<std::string> projects;
};

enum class exchange_outcome : std::size_t { minted, invalid_token, no_publisher, replayed, unavailable, failed };
inline constexpr std::size_t exchange_outcome_count = static_cast<std::size_t>(exchange_outcome::failed) + 1;
std::string_view to_string(exchange_outcome outcome) noexcept;
exchange_outcome outcome_of(const result<minted_token>& exchanged) noexcept;

class token_exchange {
public:
    token_exchange(auth::token_store& tokens, publisher_store& publishers, key_cache& keys, exchange_settings settings);

    result<minted_token> exchange(std::string_view identity_token);

    const std::string& audience() const noexcept { return settings_.audience; }
    // How long a client refused with unavailable should wait: until the issuer may be fetched again.
    std::chrono::seconds retry_after(std::string_view identity_token) const;

    // Exchanges answered, by outcome, since the exchange was made, and the issuers' key sets
    // fetched (for /metrics).
    std::uint64_t count(exchange_outcome outcome) const noexcept;
    key_cache::statistics key_fetches() const noexcept { return keys_.stats(); }

private:
    result<minted_token> mint(const std::vector<publisher>& matched, const verified_token& token);
    std::int64_t now_seconds() const;

    auth::token_store& tokens_;
    publisher_store& publishers_;
    key_cache& keys_;
    exchange_settings settings_;
    std::array<std::atomic<std::uint64_t>, exchange_outcome_count> outcomes_{};
};

}  // namespace wheelhouse::oidc
