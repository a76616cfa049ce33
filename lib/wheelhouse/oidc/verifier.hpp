#pragma once
// Whether a token is what it claims: its signature under the issuer's key, then its registered
// claims (RFC 7519 section 4.1) as Warehouse checks them, or more strictly: the issuer exactly,
// exactly one audience and it ours, exp and iat present, nbf when present, each within a small
// leeway, a jti. Pure: the key and the time are the caller's.

#include <chrono>
#include <cstdint>
#include <string>

#include <boost/json/object.hpp>

#include "wheelhouse/oidc/jwk.hpp"
#include "wheelhouse/oidc/jwt.hpp"
#include "wheelhouse/result.hpp"

namespace wheelhouse::oidc {

struct token_rules {
    std::string issuer;                  // the "iss" a token must carry, exactly
    std::string audience;                // the one "aud" it must carry
    std::int64_t now_seconds = 0;        // Unix time
    std::int64_t leeway_seconds = 30;    // clocks differ; Warehouse allows as much
    // A CI token lives minutes; one said to live longer than a day is refused (and so no replay
    // record is kept longer than that).
    std::int64_t max_lifetime_seconds = 24 * 3600;
    std::size_t max_token_id_bytes = 256;
};

struct verified_token {
    boost::json::object claims;
    std::string issuer;
    std::string token_id;           // "jti": accepted once
    std::int64_t expires_seconds;   // "exp"
};

// The token's claims once its signature verifies with `key` and its registered claims keep
// `rules`. `invalid`, with the reason a CI log can act on, otherwise.
result<verified_token> verify_token(const unverified_token& token, const verification_key& key, const token_rules& rules);

// The issuer the token says it is from, before anything is checked: which keys to check it with.
result<std::string> claimed_issuer(const unverified_token& token);

}  // namespace wheelhouse::oidc
