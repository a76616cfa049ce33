#pragma once
// The keys an OpenID Connect issuer publishes: its discovery document (OpenID Connect Discovery
// 1.0, .well-known/openid-configuration), which names its JWK set (RFC 7517), and the public keys
// in that set, turned into OpenSSL keys once, when the set is read. Pure: fetching is the
// caller's (key_cache.hpp).

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <openssl/types.h>

#include "wheelhouse/oidc/jwt.hpp"
#include "wheelhouse/result.hpp"

namespace wheelhouse::oidc {

// The bounds of what an issuer may publish. Real sets hold a handful of keys.
inline constexpr std::size_t max_discovery_bytes = 64 * 1024;
inline constexpr std::size_t max_key_set_bytes = 256 * 1024;
inline constexpr std::size_t max_keys = 64;
inline constexpr unsigned min_rsa_bits = 2048;
inline constexpr unsigned max_rsa_bits = 8192;

enum class key_type { rsa, ec_p256, ec_p384 };

// Whether a key of `type` may check a signature made with `alg`: RSA for RS*, P-256 for ES256,
// P-384 for ES384.
bool fits(key_type type, algorithm alg) noexcept;

// One public key of a set. Thread safety: immutable once made; shared between threads.
struct verification_key {
    std::string key_id;                  // "kid"
    key_type type = key_type::rsa;
    std::optional<algorithm> alg;        // the JWK's "alg" when it names one: then only that one
    std::shared_ptr<EVP_PKEY> key;       // never null
};

struct key_set {
    std::vector<std::shared_ptr<const verification_key>> keys;

    // The key whose "kid" is `key_id`; null when none has it.
    std::shared_ptr<const verification_key> find(std::string_view key_id) const;
    // The key ids, comma-separated, for messages.
    std::string key_ids() const;
};

// Reads a JWK set ({"keys": [...]}). Keys that cannot sign tokens here are passed over: "use"
// other than "sig", a "kty" other than RSA or EC, an EC curve other than P-256 or P-384, and
// keys without "kid" (a token names its key by kid). `invalid`, with the reason, for: JSON that
// is no object or repeats a key, no "keys" list, more than max_keys keys, two keys with one
// kid (which one would be meant cannot be decided), an RSA key under min_rsa_bits or over
// max_rsa_bits, an even or tiny RSA exponent, EC coordinates of the wrong length or off the
// curve, an "alg" the key's type cannot use, and a set left with no usable key.
result<key_set> parse_key_set(std::string_view json);

// From a discovery document: its "jwks_uri", after checking that its "issuer" is exactly
// `issuer` (OpenID Connect Discovery 1.0 section 4.3) and that the URI is https:// on the
// issuer's own host and port (a document naming another host is refused: its keys would be
// trusted for this issuer). `invalid`, with the reason, otherwise.
result<std::string> jwks_uri_of(std::string_view discovery_json, std::string_view issuer);

// "https://HOST[:PORT]/…/.well-known/openid-configuration" for an issuer URL (its trailing '/'
// dropped first, as the discovery specification says).
std::string discovery_url(std::string_view issuer);

}  // namespace wheelhouse::oidc
