#pragma once
// What an upload's PEP 740 attestations become: the form's `attestations` field checked whole
// (a JSON list of at most max_attestations, no predicate type twice, each verified,
// attestation.hpp), each signed by the trusted publisher whose minted token uploads the file,
// and the provenance object (PEP 740's integrity API) that is stored once and served as it is.
// Matching the publisher follows pypi-attestations' GitHub and GitLab policies, and is stricter:
// the certificate's owner id must be the publisher's, as for the token that minted it. Pure.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "wheelhouse/attest/attestation.hpp"
#include "wheelhouse/oidc/publisher.hpp"
#include "wheelhouse/result.hpp"

namespace wheelhouse::attest {

// One of each predicate type PyPI knows; the whole field's size bounds the work.
inline constexpr std::size_t max_attestations = 2;
inline constexpr std::size_t max_attestations_bytes = 256 * 1024;

// Whether `by` is `who`: issuer, source repository (its case ignored, as GitHub and GitLab do),
// owner id when the publisher has one, and the build config URI naming the publisher's
// workflow at the certificate's own ref or commit. `invalid`, naming the first that differs.
result<void> match_publisher(const oidc::publisher& who, const signer& by);

// The PEP 740 publisher object: {"kind": "GitHub", "repository", "workflow" (its file name),
// "environment"} or {"kind": "GitLab", "repository", "workflow_filepath", "environment"}.
boost::json::object publisher_json(const oidc::publisher& who);

// The provenance object to keep for a file, from the upload's `attestations` field:
// {"version": 1, "attestation_bundles": [{"publisher": …, "attestations": [as sent]}]}, its JSON
// text ("" for an empty list). `invalid`, saying what to fix, for a field that is not such a list, and for any
// attestation that fails. Cost: linear in the field; each attestation is verified once.
result<std::string> provenance_of_upload(const trust_root& root, const oidc::publisher& who, std::string_view field,
                                         std::string_view filename, std::string_view sha256, std::int64_t now);

}  // namespace wheelhouse::attest
