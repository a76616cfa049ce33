#include "wheelhouse/attest/provenance.hpp"

#include <set>

#include <boost/json/serialize.hpp>

#include "wheelhouse/text/ascii.hpp"
#include "wheelhouse/text/json_object.hpp"
#include "wheelhouse/text/quoted.hpp"

namespace wheelhouse::attest {
namespace {

namespace json = boost::json;

error mismatch(std::string_view what, std::string_view found, std::string_view wanted) {
    return invalid("the attestation was signed by another workflow than this upload's trusted publisher: its " +
                   std::string(what) + " is " + text::quoted(found, 160) + ", the publisher's is " +
                   text::quoted(wanted, 160));
}

// Where the certificate says the repository lives, as Fulcio writes it: GitHub Actions' tokens
// name no server, so github.com unless the issuer is a GitHub Enterprise Server's
// ("https://HOST/_services/token"); a GitLab's tokens are its instance's (ci_config_ref_uri).
std::string server_of(const oidc::publisher& who) {
    if (who.kind == oidc::publisher_kind::gitlab) return who.issuer;
    constexpr std::string_view enterprise_suffix = "/_services/token";
    if (who.issuer.ends_with(enterprise_suffix)) return who.issuer.substr(0, who.issuer.size() - enterprise_suffix.size());
    return "https://github.com";
}

}  // namespace

result<void> match_publisher(const oidc::publisher& who, const signer& by) {
    if (by.issuer != who.issuer) return mismatch("issuer", by.issuer, who.issuer);
    const std::string repository = server_of(who) + "/" + who.repository;
    if (!text::equals_ignoring_case(by.source_repository_uri, repository))
        return mismatch("source repository", by.source_repository_uri, repository);
    if (!who.owner_id.empty() && by.owner_id != who.owner_id) return mismatch("owner id", by.owner_id, who.owner_id);
    // GitHub: REPO/.github/workflows/x.yml@REF; GitLab: REPO//.gitlab-ci.yml@REF.
    const std::string separator = who.kind == oidc::publisher_kind::gitlab ? "//" : "/";
    const std::string_view config = by.build_config_uri;
    const auto at = config.rfind('@');
    const auto ref = at == std::string_view::npos ? std::string_view{} : config.substr(at + 1);
    const bool same_repository = text::starts_with_ignoring_case(config, repository);
    const bool names_workflow =
        same_repository && at != std::string_view::npos &&
        config.substr(repository.size(), at - repository.size()) == separator + who.workflow;
    if (!names_workflow || ref.empty() || (ref != by.source_ref && ref != by.source_digest)) {
        return mismatch("build config URI", config,
                        repository + separator + who.workflow + "@" + (by.source_ref.empty() ? "REF" : by.source_ref));
    }
    return {};
}

json::object publisher_json(const oidc::publisher& who) {
    const json::value environment = who.environment.empty() ? json::value(nullptr) : json::value(who.environment);
    if (who.kind == oidc::publisher_kind::gitlab) {
        return {{"kind", "GitLab"},
                {"repository", who.repository},
                {"workflow_filepath", who.workflow},
                {"environment", environment}};
    }
    const auto slash = who.workflow.rfind('/');
    const std::string file = slash == std::string::npos ? who.workflow : who.workflow.substr(slash + 1);
    return {{"kind", "GitHub"}, {"repository", who.repository}, {"workflow", file}, {"environment", environment}};
}

result<std::string> provenance_of_upload(const trust_root& root, const oidc::publisher& who, std::string_view field,
                                         std::string_view filename, std::string_view sha256, std::int64_t now) {
    if (field.size() > max_attestations_bytes) {
        return invalid("send smaller attestations: the 'attestations' field is " + std::to_string(field.size()) +
                       " bytes, over this index's " + std::to_string(max_attestations_bytes));
    }
    auto parsed = text::parse_json_value(field);
    if (!parsed || !parsed->is_array()) {
        return invalid("send 'attestations' as a JSON list of PEP 740 attestation objects: " +
                       (parsed ? std::string("it is not a list") : parsed.error().message));
    }
    auto& attestations = parsed->as_array();
    if (attestations.empty()) return std::string();
    if (attestations.size() > max_attestations) {
        return invalid("send at most " + std::to_string(max_attestations) + " attestations, one per predicate type; " +
                       "the upload has " + std::to_string(attestations.size()));
    }
    std::set<std::string> predicates;
    for (const auto& attestation : attestations) {
        auto verified = verify_attestation(root, attestation, filename, sha256, now);
        if (!verified) return verified.error();
        if (auto matched = match_publisher(who, verified->signed_by); !matched) return matched.error();
        if (!predicates.insert(verified->predicate_type).second)
            return invalid("send one attestation per predicate type: " + verified->predicate_type + " is there twice");
    }
    json::object bundle{{"publisher", publisher_json(who)}, {"attestations", std::move(attestations)}};
    json::object provenance{{"version", 1}, {"attestation_bundles", json::array{std::move(bundle)}}};
    return json::serialize(provenance);
}

}  // namespace wheelhouse::attest
