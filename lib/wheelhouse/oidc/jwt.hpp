#pragma once
// A JSON Web Token as a CI system signs it (RFC 7519 in RFC 7515's compact form), read but not
// yet trusted: the header's algorithm and key id, the claims, and the bytes the signature covers.
// Pure: the signature is checked by signature.hpp with a key the issuer published.

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include <boost/json/object.hpp>

#include "wheelhouse/result.hpp"

namespace wheelhouse::oidc {

// The signature algorithms a token may use: asymmetric ones only, fixed here and not taken from
// configuration or from the key. "none" and the HMAC family (HS256, ...) are refused by name: an
// HMAC "signed" with a public key proves nothing.
enum class algorithm { rs256, rs384, rs512, es256, es384 };

// "RS256", ...: the JOSE names (RFC 7518 section 3.1).
std::string_view name_of(algorithm which) noexcept;
// nullopt for every name but the five above, compared exactly (JOSE names are case-sensitive).
std::optional<algorithm> algorithm_named(std::string_view name) noexcept;

// GitHub's and GitLab's tokens are 1-2 KiB; a token ten times that is no CI token.
inline constexpr std::size_t max_token_bytes = 16 * 1024;

struct unverified_token {
    algorithm alg = algorithm::rs256;
    std::string key_id;              // the header's "kid"
    boost::json::object claims;      // the payload; trust none of it before the signature is checked
    std::string_view signing_input;  // "header.payload" as sent: what the signature covers (a view of the token)
    std::string signature;           // the signature's bytes
};

// Splits and decodes `token` (header.payload.signature, each unpadded base64url). Refuses, as
// `invalid` with the reason: more than max_token_bytes, not three parts, bad base64url, a header
// or payload that is no JSON object or repeats a key, an algorithm outside the list above, no
// "kid", a "typ" other than JWT, or a "crit" header (no extension is understood here). The
// result's signing_input points into `token`, which must outlive it.
result<unverified_token> parse_token(std::string_view token);

// The claim `name` when it is a string; nullopt when absent or of another type.
std::optional<std::string_view> string_claim(const boost::json::object& claims, std::string_view name);

}  // namespace wheelhouse::oidc
