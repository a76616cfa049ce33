// Attestations Sigstore's public-good instance signed, verified against its trust root as
// sigstore-python ships it (tests/data/attest/README.md): what this index accepts is what
// pypi-attestations accepts, for real certificates, logs and workflows.

#include <catch2/catch.hpp>

#include "wheelhouse/attest/attestation.hpp"
#include "wheelhouse/attest/provenance.hpp"
#include "wheelhouse/attest/trust_root.hpp"
#include "wheelhouse/crypto/hasher.hpp"
#include "wheelhouse/text/json_object.hpp"
#include "test_support.hpp"

#ifndef WHEELHOUSE_TEST_DATA_DIR
#error "tests/CMakeLists.txt defines WHEELHOUSE_TEST_DATA_DIR as the path of tests/data"
#endif

using namespace wheelhouse;

namespace {

constexpr std::int64_t now = 1795000000;  // November 2026

std::string data_file(std::string_view name) {
    auto text = testing::read_file(std::filesystem::path(WHEELHOUSE_TEST_DATA_DIR) / "attest" / name);
    REQUIRE_FALSE(text.empty());
    return text;
}

const attest::trust_root& public_good() {
    static const attest::trust_root root = [] {
        auto parsed = attest::parse_trust_root(data_file("sigstore_trusted_root.json"));
        REQUIRE(parsed);
        return std::move(*parsed);
    }();
    return root;
}

result<attest::verified_attestation> verify_saved(std::string_view dist, std::string_view attestation) {
    auto value = text::parse_json_value(data_file(attestation));
    REQUIRE(value);
    return attest::verify_attestation(public_good(), *value, dist, crypto::sha256_hex(data_file(dist)), now);
}

oidc::publisher publisher_of(oidc::publisher_kind kind, std::string issuer, std::string repository,
                             std::string owner_id, std::string workflow) {
    oidc::publisher who;
    who.kind = kind;
    who.issuer = std::move(issuer);
    who.repository = std::move(repository);
    who.owner_id = std::move(owner_id);
    who.workflow = std::move(workflow);
    return who;
}

}  // namespace

TEST_CASE("attest: the public-good trust root reads, its Rekor v2 log passed over", "[attest]") {
    CHECK(public_good().authorities.size() == 2);
    CHECK(public_good().logs.size() == 1);  // the Rekor v1 log; the Ed25519 one is not checked here
}

TEST_CASE("attest: GitHub Actions' attestations of pypi-attestations 0.0.19 verify", "[attest]") {
    constexpr std::string_view dist = "pypi_attestations-0.0.19.tar.gz";
    const auto who = publisher_of(oidc::publisher_kind::github, std::string(oidc::github_issuer),
                                  "trailofbits/pypi-attestations", "2314423", ".github/workflows/release.yml");
    for (const auto& [file, predicate] : {std::pair{"pypi_attestations-0.0.19.tar.gz.publish.attestation",
                                                    attest::publish_predicate},
                                          std::pair{"pypi_attestations-0.0.19.tar.gz.slsa.attestation",
                                                    attest::slsa_predicate}}) {
        INFO(file);
        auto verified = verify_saved(dist, file);
        REQUIRE(verified);
        CHECK(verified->predicate_type == predicate);
        CHECK(verified->signed_by.source_repository_uri == "https://github.com/trailofbits/pypi-attestations");
        CHECK(attest::match_publisher(who, verified->signed_by));
        auto other_workflow = who;
        other_workflow.workflow = ".github/workflows/ci.yml";
        CHECK_FALSE(attest::match_publisher(other_workflow, verified->signed_by));
        auto other_owner = who;
        other_owner.owner_id = "1";
        CHECK_FALSE(attest::match_publisher(other_owner, verified->signed_by));
    }
    // Another file's bytes under its name: the subject's digest differs.
    auto value = text::parse_json_value(data_file("pypi_attestations-0.0.19.tar.gz.publish.attestation"));
    REQUIRE(value);
    CHECK_FALSE(attest::verify_attestation(public_good(), *value, dist,
                                           crypto::sha256_hex(data_file("gitlab_oidc_project-0.0.3.tar.gz")), now));
}

TEST_CASE("attest: a gitlab.com job's attestation verifies for its GitLab publisher", "[attest]") {
    auto verified = verify_saved("gitlab_oidc_project-0.0.3.tar.gz", "gitlab_oidc_project-0.0.3.tar.gz.publish.attestation");
    REQUIRE(verified);
    INFO(verified->signed_by.source_repository_uri << " " << verified->signed_by.build_config_uri << " "
         << verified->signed_by.owner_id);
    const auto repository = verified->signed_by.source_repository_uri.substr(std::string_view("https://gitlab.com/").size());
    const auto who = publisher_of(oidc::publisher_kind::gitlab, "https://gitlab.com", repository,
                                  verified->signed_by.owner_id, ".gitlab-ci.yml");
    CHECK(attest::match_publisher(who, verified->signed_by));
}

TEST_CASE("attest: a real attestation for another file's name is refused", "[attest]") {
    auto refused = verify_saved("pypi_attestations-0.0.19.tar.gz", "gitlab_oidc_project-0.0.3.tar.gz.publish.attestation");
    REQUIRE_FALSE(refused);
    CHECK(refused.error().message.find("subject") != std::string::npos);
}
