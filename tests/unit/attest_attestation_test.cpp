#include <catch2/catch.hpp>


#include <boost/json/serialize.hpp>

#include "wheelhouse/attest/attestation.hpp"
#include "wheelhouse/attest/provenance.hpp"
#include "wheelhouse/attest/trust_root.hpp"
#include "wheelhouse/text/json_object.hpp"
#include "test_support.hpp"

#ifndef WHEELHOUSE_ATTESTATIONS_DIR
#error "tests/CMakeLists.txt defines WHEELHOUSE_ATTESTATIONS_DIR"
#endif

using namespace wheelhouse;

namespace {

// Made by tests/e2e/sigstore_stand_in.py for these bytes, as the fuzz target's seeds.
constexpr std::string_view seeds_filename = "flash_attn-2.8.3-cp312-cp312-linux_x86_64.whl";
constexpr std::string_view seeds_sha256 = "146ea06ec74ba05a36df91daeb3d5204f83fea969c953a76c50eaa5c1825e920";
constexpr std::int64_t far_future = 4102444800;

std::string saved(std::string_view name) {
    auto text = testing::read_file(std::filesystem::path(WHEELHOUSE_ATTESTATIONS_DIR) / name);
    REQUIRE_FALSE(text.empty());
    return text;
}

attest::trust_root seeds_root() {
    auto root = attest::parse_trust_root(saved("trust_root.json"));
    REQUIRE(root);
    return std::move(*root);
}

boost::json::value saved_attestation(std::string_view name) {
    auto value = text::parse_json_value(saved(name));
    REQUIRE(value);
    return std::move(*value);
}

oidc::publisher stand_in_publisher() {
    oidc::publisher who;
    who.project = "flash-attn";
    who.kind = oidc::publisher_kind::github;
    who.issuer = std::string(oidc::github_issuer);
    who.repository = "Dao-AILab/flash-attention";
    who.owner_id = "77001";
    who.workflow = ".github/workflows/release.yml";
    return who;
}

}  // namespace

TEST_CASE("attest: RFC 3339 UTC times as protobuf writes them", "[attest]") {
    CHECK(attest::parse_rfc3339_utc("1970-01-01T00:00:00Z") == 0);
    CHECK(attest::parse_rfc3339_utc("2021-03-07T03:20:29Z") == 1615087229);
    CHECK(attest::parse_rfc3339_utc("2021-03-07T03:20:29.123456789Z") == 1615087229);
    for (const std::string_view bad : {"2021-03-07T03:20:29", "2021-03-07 03:20:29Z", "2021-03-07T03:20:29+00:00",
                                       "2021-13-07T03:20:29Z", "2021-03-07T03:20:29.Z", "2021-03-07T03:20:29.1234567890Z",
                                       "", "Z", "２021-03-07T03:20:29Z"}) {
        INFO(bad);
        CHECK_FALSE(attest::parse_rfc3339_utc(bad));
    }
}

TEST_CASE("attest: filenames compared as pypi-attestations ultranormalizes them", "[attest]") {
    using attest::ultranormalized_filename;
    CHECK(ultranormalized_filename("Flash.Attn-2.8.3-cp312-cp312-linux_x86_64.whl") ==
          "flash_attn-2.8.3-cp312-cp312-linux_x86_64.whl");
    CHECK(ultranormalized_filename("pkg-1.0-py3.py2-none-any.whl") == "pkg-1.0-py2.py3-none-any.whl");
    CHECK(ultranormalized_filename("pkg-1.0-1a-py3-none-any.whl") == "pkg-1.0-1a-py3-none-any.whl");
    CHECK(ultranormalized_filename("pkg-01.0+CU128-py3-none-any.whl") == "pkg-1.0+cu128-py3-none-any.whl");
    CHECK(ultranormalized_filename("flash_attn-2.8.3.tar.gz") == "flash_attn-2.8.3.tar.gz");
    CHECK_FALSE(ultranormalized_filename("flash_attn-2.8.3.zip"));
    CHECK_FALSE(ultranormalized_filename("not a file"));
    CHECK_FALSE(ultranormalized_filename(""));
}

TEST_CASE("attest: a trust root needs its authorities and logs whole", "[attest]") {
    const auto root = seeds_root();
    REQUIRE(root.authorities.size() == 1);
    CHECK(root.authorities.front().chain.size() == 2);
    REQUIRE(root.logs.size() == 1);
    CHECK(root.log_with_id(root.logs.front().log_id) == &root.logs.front());
    CHECK(root.log_with_id("another id") == nullptr);

    auto document = text::parse_json_object(saved("trust_root.json"));
    REQUIRE(document);
    auto without = [&](std::string_view key) {
        auto copy = *document;
        copy.erase(key);
        return attest::parse_trust_root(boost::json::serialize(copy));
    };
    CHECK(without("tlogs").error().message.find("tlogs") != std::string::npos);
    CHECK(without("certificateAuthorities").error().message.find("certificateAuthorities") != std::string::npos);
    auto no_id = *document;
    no_id["tlogs"].as_array()[0].as_object()["logId"].as_object()["keyId"] = "";
    CHECK(attest::parse_trust_root(boost::json::serialize(no_id)).error().message.find("keyId") != std::string::npos);
    // Rekor v2's Ed25519 logs are passed over; a root left with none to check is refused.
    auto ed25519 = *document;
    ed25519["tlogs"].as_array()[0].as_object()["publicKey"].as_object()["rawBytes"] =
        "MCowBQYDK2VwAyEA3Ri7NFMMWn2LWQJc4MvqM3PTBx59m78zi16sDia9fSU=";
    CHECK(attest::parse_trust_root(boost::json::serialize(ed25519)).error().message.find("no tlogs with an EC") !=
          std::string::npos);
    CHECK_FALSE(attest::parse_trust_root(std::string(attest::max_trust_root_bytes + 1, ' ')));
}

TEST_CASE("attest: a saved attestation verifies for its file only", "[attest]") {
    const auto root = seeds_root();
    const auto attestation = saved_attestation("verified_attestation.json");
    auto verified = attest::verify_attestation(root, attestation, seeds_filename, seeds_sha256, far_future);
    REQUIRE(verified);
    CHECK(verified->predicate_type == attest::publish_predicate);
    CHECK(verified->signed_by.source_repository_uri == "https://github.com/Dao-AILab/flash-attention");
    CHECK(verified->signed_by.owner_id == "77001");
    CHECK(attest::match_publisher(stand_in_publisher(), verified->signed_by));

    auto other_file = attest::verify_attestation(root, attestation, "flash_attn-2.8.4-cp312-cp312-linux_x86_64.whl",
                                                 seeds_sha256, far_future);
    CHECK(other_file.error().message.find("subject") != std::string::npos);
    std::string other_sha256(seeds_sha256);
    other_sha256[0] = '0';
    CHECK(attest::verify_attestation(root, attestation, seeds_filename, other_sha256, far_future)
              .error().message.find("sha256") != std::string::npos);
    // Logged "in the future" by more than the clock's leeway.
    CHECK(attest::verify_attestation(root, attestation, seeds_filename, seeds_sha256, verified->integrated_time - 3600)
              .error().message.find("future") != std::string::npos);
}

TEST_CASE("attest: the signer must be the minting publisher", "[attest]") {
    const auto root = seeds_root();
    auto verified = attest::verify_attestation(root, saved_attestation("verified_attestation.json"), seeds_filename,
                                               seeds_sha256, far_future);
    REQUIRE(verified);
    const auto& signer = verified->signed_by;
    auto refused = [&](oidc::publisher who) { return attest::match_publisher(who, signer).error().message; };

    auto who = stand_in_publisher();
    who.repository = "dao-ailab/FLASH-attention";  // GitHub ignores case
    CHECK(attest::match_publisher(who, signer));
    who = stand_in_publisher();
    who.owner_id = "77002";  // the same name under another owner
    CHECK(refused(who).find("owner id") != std::string::npos);
    who = stand_in_publisher();
    who.workflow = ".github/workflows/nightly.yml";
    CHECK(refused(who).find("build config URI") != std::string::npos);
    who = stand_in_publisher();
    who.repository = "Dao-AILab/flash-attention-fork";
    CHECK(refused(who).find("source repository") != std::string::npos);
    who = stand_in_publisher();
    who.issuer = "https://gitlab.com";
    CHECK(refused(who).find("issuer") != std::string::npos);
}

TEST_CASE("attest: the upload field is a short list, one per predicate type", "[attest]") {
    const auto root = seeds_root();
    const auto who = stand_in_publisher();
    const auto one = boost::json::serialize(saved_attestation("verified_attestation.json"));
    const auto slsa = boost::json::serialize(saved_attestation("verified_slsa_attestation.json"));
    auto field = [&](std::string_view text) {
        return attest::provenance_of_upload(root, who, text, seeds_filename, seeds_sha256, far_future);
    };
    auto both = field("[" + one + "," + slsa + "]");
    REQUIRE(both);
    auto provenance = text::parse_json_object(*both);
    REQUIRE(provenance);
    const auto& bundle = provenance->at("attestation_bundles").as_array().at(0).as_object();
    CHECK(bundle.at("publisher").as_object().at("workflow") == "release.yml");
    CHECK(bundle.at("attestations").as_array().size() == 2);

    CHECK(field("[]").value().empty());
    CHECK(field("[" + one + "," + one + "]").error().message.find("twice") != std::string::npos);
    CHECK(field("[" + one + "," + slsa + "," + one + "]").error().message.find("at most 2") != std::string::npos);
    CHECK(field("{}").error().message.find("JSON list") != std::string::npos);
    CHECK(field(std::string(attest::max_attestations_bytes + 1, ' ')).error().message.find("smaller") !=
          std::string::npos);
}
