// A PEP 740 attestation as an upload's form carries it, and a Sigstore trusted_root.json
// (attest/). The input is checked as an attestation against a fixed trust root, whose keys made
// the seeds in regressions/attest_attestation_fuzz/ (by tests/e2e/sigstore_stand_in.py), so
// mutations start from attestations that verify; and as a trust root. Beside memory safety:
// - a refusal says why in printable ASCII;
// - an accepted attestation is bound to its file: the same one for another filename or another
//   sha256 is refused, and it names a predicate type PyPI knows;
// - an accepted trust root lists at least one authority and one log, each with a key and an id.

#include <algorithm>
#include <string>

#include "fuzz_support.hpp"
#include "wheelhouse/attest/attestation.hpp"
#include "wheelhouse/attest/trust_root.hpp"
#include "wheelhouse/text/json_object.hpp"

namespace {

namespace attest = wheelhouse::attest;

// The public half of the stand-in that signed the seeds.
constexpr std::string_view seeds_trust_root = R"json({"mediaType":"application/vnd.dev.sigstore.trustedroot+json;version=0.1","tlogs":[{"baseUrl":"https://rekor.sigstore.dev","hashAlgorithm":"SHA2_256","publicKey":{"rawBytes":"MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEZB249DOeZ1tExbDWfp5+BQd67mBrc5jXpOm2wT8nVhEjCe60bsr6L7MmykYSKFyhAOHdSLT/pL6a4t+ApL9pxw==","keyDetails":"PKIX_ECDSA_P256_SHA_256","validFor":{"start":"2026-11-28T06:15:55Z"}},"logId":{"keyId":"H0uikLOWwW+Uk1p8sb8xXNhce4489Iow8LPIRG2HiKA="}}],"certificateAuthorities":[{"subject":{"organization":"sigstore.dev","commonName":"sigstore"},"uri":"https://fulcio.sigstore.dev","certChain":{"certificates":[{"rawBytes":"MIICGjCCAaGgAwIBAgIUPsEjOPEvN+CpTrXgMoVMVilx9ocwCgYIKoZIzj0EAwMwKjEVMBMGA1UECgwMc2lnc3RvcmUuZGV2MREwDwYDVQQDDAhzaWdzdG9yZTAeFw0yNjExMjgwNjE1NTVaFw0zNTAyMTQwNjE1NTVaMDcxFTATBgNVBAoMDHNpZ3N0b3JlLmRldjEeMBwGA1UEAwwVc2lnc3RvcmUtaW50ZXJtZWRpYXRlMHYwEAYHKoZIzj0CAQYFK4EEACIDYgAEohM3DI2HaiDRDN0+59ENPDRp0eHeLumAbjufLBTQonBUngNEB13Y0OTQxXJ+XYfWlDkMm8IrIHcb3vF2ezNboxOA2mu1G7yewWAdhzcBDxvgCcNUAXbO8eZzl9Y3Q4seo3sweTAOBgNVHQ8BAf8EBAMCAQYwEwYDVR0lBAwwCgYIKwYBBQUHAwMwEgYDVR0TAQH/BAgwBgEB/wIBADAdBgNVHQ4EFgQUfHbM1pzfZ060gt6wlQQk1ec9PG4wHwYDVR0jBBgwFoAU/hYE8aeuwX0ueQjy/gD2vbIwAtwwCgYIKoZIzj0EAwMDZwAwZAIwcmKyU/b6enLua8+Oi6bwOHomjdbWN5FaNjLkKRZItT/fzYBukI3EkLSgvugPTL5bAjB1kQea8ofdo/b3UJ0/fuOr2N4eM3sUZWqNwKvQxgSi+xF2gvindi0u7SJufGaonPw="},{"rawBytes":"MIIB+jCCAX+gAwIBAgIUFRbk7vE1YpfoNPIKWLvKflgCBNAwCgYIKoZIzj0EAwMwKjEVMBMGA1UECgwMc2lnc3RvcmUuZGV2MREwDwYDVQQDDAhzaWdzdG9yZTAeFw0yNjExMjgwNjE1NTVaFw0zNjExMjUwNjE1NTVaMCoxFTATBgNVBAoMDHNpZ3N0b3JlLmRldjERMA8GA1UEAwwIc2lnc3RvcmUwdjAQBgcqhkjOPQIBBgUrgQQAIgNiAATLNePdvTf+qKC1Dg213VI5gS3DZxfW1cLQ7KlQNm2ckht6D4OnVP8SW3BJ/mHiXlVE/oESRP65qjetFS6ZFk5KTiZuJxBcOTCGHFV4FoGb+Z02Zbd0B8ryzTTXBhbnzqqjZjBkMA4GA1UdDwEB/wQEAwIBBjASBgNVHRMBAf8ECDAGAQH/AgEBMB0GA1UdDgQWBBT+FgTxp67BfS55CPL+APa9sjAC3DAfBgNVHSMEGDAWgBT+FgTxp67BfS55CPL+APa9sjAC3DAKBggqhkjOPQQDAwNpADBmAjEA9tnJbXjc7N+CGlRxN54nvMCQrUywS55/08hF1yUN4l87iEBMEk6trbcPEAhXiSjAAjEA/wD7ExPv4BQBaLhC9lmzPRv2AHC/c8g9sGfOK2O/2hQK/8pDZpXLS5skG8aGaofo"}]},"validFor":{"start":"2026-11-28T06:15:55Z"}}],"ctlogs":[],"timestampAuthorities":[]})json";
constexpr std::string_view seeds_filename = "flash_attn-2.8.3-cp312-cp312-linux_x86_64.whl";
constexpr std::string_view seeds_sha256 = "146ea06ec74ba05a36df91daeb3d5204f83fea969c953a76c50eaa5c1825e920";
constexpr std::int64_t now = 4102444800;  // 2100-01-01: every seed is in the past

bool printable(const std::string& message) {
    return !message.empty() && std::all_of(message.begin(), message.end(), [](char c) { return c >= 0x20 && c < 0x7F; });
}

const attest::trust_root& seeds_root() {
    static const attest::trust_root root = [] {
        auto parsed = attest::parse_trust_root(seeds_trust_root);
        WHEELHOUSE_FUZZ_CHECK(parsed.has_value(), parsed ? "" : parsed.error().message);
        return std::move(*parsed);
    }();
    return root;
}

void check_attestation(std::string_view text) {
    auto value = wheelhouse::text::parse_json_value(text);
    if (!value) return;
    const auto& root = seeds_root();
    auto verified = attest::verify_attestation(root, *value, seeds_filename, seeds_sha256, now);
    if (!verified) {
        WHEELHOUSE_FUZZ_CHECK(printable(verified.error().message), std::string(text) + " -> " + verified.error().message);
        return;
    }
    WHEELHOUSE_FUZZ_CHECK(verified->predicate_type == attest::publish_predicate ||
                              verified->predicate_type == attest::slsa_predicate,
                          verified->predicate_type);
    const auto other_file = attest::verify_attestation(root, *value, "flash_attn-2.8.4-cp312-cp312-linux_x86_64.whl",
                                                       seeds_sha256, now);
    WHEELHOUSE_FUZZ_CHECK(!other_file, std::string(text));
    std::string other_sha256(seeds_sha256);
    other_sha256[0] = other_sha256[0] == '0' ? '1' : '0';
    WHEELHOUSE_FUZZ_CHECK(!attest::verify_attestation(root, *value, seeds_filename, other_sha256, now), std::string(text));
}

void check_trust_root(std::string_view text) {
    auto parsed = attest::parse_trust_root(text);
    if (!parsed) {
        WHEELHOUSE_FUZZ_CHECK(printable(parsed.error().message), std::string(text) + " -> " + parsed.error().message);
        return;
    }
    WHEELHOUSE_FUZZ_CHECK(!parsed->authorities.empty() && !parsed->logs.empty(), std::string(text));
    for (const auto& authority : parsed->authorities) WHEELHOUSE_FUZZ_CHECK(!authority.chain.empty(), std::string(text));
    for (const auto& log : parsed->logs) {
        WHEELHOUSE_FUZZ_CHECK(log.key && !log.log_id.empty() && parsed->log_with_id(log.log_id), std::string(text));
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const auto text = wheelhouse::fuzz::as_text(data, size);
    check_attestation(text);
    check_trust_root(text);
    return 0;
}
