#pragma once
// The Sigstore trust root PEP 740 attestations are checked against: the certificate authorities
// that issue signing certificates (Fulcio) and the transparency logs that record each signature
// (Rekor), read from the trusted_root.json an operator pins (sigstore/protobuf-specs'
// TrustedRoot in its JSON form, as sigstore-python and cosign read it). Pure: the file is read by
// the caller; nothing is fetched (no TUF).

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <openssl/types.h>

#include "wheelhouse/result.hpp"

namespace wheelhouse::attest {

inline constexpr std::size_t max_trust_root_bytes = 1 << 20;

// When a key or authority may be used, in Unix seconds; no `until`: still in use.
struct validity {
    std::int64_t from = 0;
    std::optional<std::int64_t> until;

    bool contains(std::int64_t unix_seconds) const noexcept {
        return unix_seconds >= from && (!until || unix_seconds <= *until);
    }
};

// Thread safety: a trust_root is immutable once parsed and shared between threads.
struct certificate_authority {
    std::string uri;
    std::vector<std::shared_ptr<X509>> chain;  // as the file lists it: the issuing one first, the root last
    validity valid;
};

struct transparency_log {
    std::string base_url;
    std::string log_id;               // raw bytes (Rekor v1: the SHA-256 of the key's DER SubjectPublicKeyInfo)
    std::shared_ptr<EVP_PKEY> key;    // never null; an EC P-256 or P-384 key
    validity valid;
};

struct trust_root {
    std::vector<certificate_authority> authorities;
    std::vector<transparency_log> logs;

    // The log whose id is `log_id` (raw bytes); null when none.
    const transparency_log* log_with_id(std::string_view log_id) const noexcept;
};

// Reads a trusted_root.json: its "certificateAuthorities" (certChain.certificates[].rawBytes,
// base64 DER; validFor) and "tlogs" (publicKey.rawBytes, base64 DER SubjectPublicKeyInfo;
// logId.keyId; validFor). A log whose key is not EC P-256/P-384 (Rekor v2's Ed25519) is passed
// over; CT logs and timestamp authorities are not used here. `invalid`, with the reason, for a
// document that is not such JSON (a repeated key included), a certificate or key that does not
// parse, a log without keyId, a time that is not RFC 3339 UTC, and a root with no authority or
// no usable log.
result<trust_root> parse_trust_root(std::string_view json);

// "2021-03-07T03:20:29Z" or with a fraction ("….000Z"), as protobuf's JSON writes a Timestamp:
// Unix seconds (the fraction dropped); nullopt for anything else.
std::optional<std::int64_t> parse_rfc3339_utc(std::string_view text) noexcept;

}  // namespace wheelhouse::attest
