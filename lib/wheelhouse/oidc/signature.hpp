#pragma once
// Checks a JSON Web Signature with OpenSSL 3's EVP interface: RSASSA-PKCS1-v1_5 with SHA-2 for
// RS256/384/512, ECDSA for ES256/384. An ECDSA signature arrives as JWS writes it, r and s as
// fixed-length big-endian integers side by side (RFC 7518 section 3.4), and is turned into the
// DER form OpenSSL verifies.

#include <string_view>

#include "wheelhouse/oidc/jwk.hpp"
#include "wheelhouse/oidc/jwt.hpp"
#include "wheelhouse/result.hpp"

namespace wheelhouse::oidc {

// Success when `signature` is `key`'s signature of `signing_input` under `alg`. `invalid`, with
// the reason, when the key cannot be used with `alg` (its type, or the "alg" it was published
// with), when an ECDSA signature is not exactly twice the curve's size, and when the signature
// does not verify. Thread safety: any thread; keys are only read.
result<void> check_signature(algorithm alg, const verification_key& key, std::string_view signing_input,
                             std::string_view signature);

}  // namespace wheelhouse::oidc
