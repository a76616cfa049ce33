#pragma once
// One PEP 740 attestation, checked as sigstore-python and pypi-attestations check it, or
// stricter: the signing certificate chains to a Fulcio authority of the trust root at the time
// Rekor logged it; Rekor's signed entry timestamp covers that entry, and the entry names this
// very signature, certificate and statement; the DSSE signature over the in-toto statement
// verifies with the certificate's key; the statement has one subject, this file by name and
// sha256, and a predicate type PyPI knows. Who signed is returned for the caller to match
// against a trusted publisher (provenance.hpp). Pure.
//
// Not checked (said in the README): the certificate's embedded SCTs (CT log promises) and
// Rekor's inclusion proof and checkpoint; the signed entry timestamp stands for both, as it
// does in sigstore-python's offline verification.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <boost/json/value.hpp>

#include "wheelhouse/attest/trust_root.hpp"
#include "wheelhouse/result.hpp"

namespace wheelhouse::attest {

inline constexpr std::string_view publish_predicate = "https://docs.pypi.org/attestations/publish/v1";
inline constexpr std::string_view slsa_predicate = "https://slsa.dev/provenance/v1";

// Who signed: the CI identity Fulcio wrote into the leaf certificate (sigstore/fulcio's
// docs/oid-info.md). Empty when the certificate does not carry the extension.
struct signer {
    std::string issuer;                 // 1.3.6.1.4.1.57264.1.8: the OIDC token's iss
    std::string source_repository_uri;  // .12: "https://github.com/owner/repo"
    std::string owner_id;               // .17: the owner's immutable id
    std::string build_config_uri;       // .18: "https://github.com/owner/repo/.github/workflows/x.yml@refs/heads/main"
    std::string source_digest;          // .13: the commit
    std::string source_ref;             // .14: "refs/heads/main"
};

struct verified_attestation {
    std::string predicate_type;
    signer signed_by;
    std::int64_t integrated_time = 0;  // when Rekor logged it, Unix seconds
};

// Checks `attestation` (a PEP 740 Attestation object) for the distribution `filename` whose
// bytes hash to `sha256` (lower-case hex), at Unix time `now`. `invalid`, saying which part
// failed and how, otherwise. Thread safety: any thread; `root` is only read.
result<verified_attestation> verify_attestation(const trust_root& root, const boost::json::value& attestation,
                                                std::string_view filename, std::string_view sha256, std::int64_t now);

// A wheel's or sdist's filename as pypi-attestations compares a statement's subject with it
// ("ultranormalized"): name and version normalised, '-' in the name written '_', a wheel's tag
// sets each sorted. nullopt when it is neither a wheel's nor an sdist's name.
std::optional<std::string> ultranormalized_filename(std::string_view filename);

}  // namespace wheelhouse::attest
