#include <catch2/catch.hpp>

#include <boost/json.hpp>

#include "wheelhouse/auth/build_labels.hpp"
#include "wheelhouse/oidc/publisher.hpp"

using namespace wheelhouse;
namespace json = boost::json;

namespace {

oidc::publisher github_publisher() {
    oidc::publisher draft;
    draft.project = "Flash_Attn";
    draft.kind = oidc::publisher_kind::github;
    draft.repository = "Dao-AILab/flash-attention";
    draft.owner_id = "123456";
    draft.workflow = "release.yml";
    auto normalized = oidc::normalize_publisher(draft);
    REQUIRE(normalized);
    return *normalized;
}

// The claims GitHub Actions signs for the release workflow of Dao-AILab/flash-attention.
json::object github_claims() {
    return {{"repository", "Dao-AILab/flash-attention"},
            {"repository_owner", "Dao-AILab"},
            {"repository_owner_id", "123456"},
            {"job_workflow_ref", "Dao-AILab/flash-attention/.github/workflows/release.yml@refs/tags/v2.8.3"},
            {"ref", "refs/tags/v2.8.3"},
            {"sha", "0123abcd"},
            {"event_name", "push"},
            {"environment", "PyPI"}};
}

std::string mismatch(const oidc::publisher& who, const json::object& claims) {
    auto matched = oidc::match_claims(who, claims);
    return matched ? std::string("matched") : matched.error().message;
}

}  // namespace

TEST_CASE("publisher: what an admin gives is checked and normalised", "[oidc]") {
    const auto who = github_publisher();
    CHECK(who.project == "flash-attn");
    CHECK(who.issuer == "https://token.actions.githubusercontent.com");
    CHECK(who.workflow == ".github/workflows/release.yml");
    CHECK(oidc::describe(who) == "github Dao-AILab/flash-attention (owner id 123456) .github/workflows/release.yml");

    const auto refused = [](auto change, std::string_view reason) {
        oidc::publisher draft = github_publisher();
        change(draft);
        auto normalized = oidc::normalize_publisher(draft);
        REQUIRE_FALSE(normalized);
        CHECK_THAT(normalized.error().message, Catch::Contains(std::string(reason)));
    };
    refused([](auto& d) { d.owner_id = ""; }, "numeric id");
    refused([](auto& d) { d.owner_id = "12a"; }, "numeric id");
    refused([](auto& d) { d.repository = "flash-attention"; }, "OWNER/NAME");
    refused([](auto& d) { d.repository = "a/b/c"; }, "OWNER/NAME");
    refused([](auto& d) { d.repository = "a/../b"; }, "OWNER/NAME");
    refused([](auto& d) { d.workflow = ".github/workflows/release.sh"; }, ".yml or .yaml");
    refused([](auto& d) { d.workflow = "../release.yml"; }, ".yml or .yaml");
    refused([](auto& d) { d.workflow = "release@main.yml"; }, ".yml or .yaml");
    refused([](auto& d) { d.issuer = "http://token.actions.githubusercontent.com"; }, "https://");
    refused([](auto& d) { d.issuer = "https://user@ci.example"; }, "https://");
    refused([](auto& d) { d.project = "-bad-"; }, "valid project name");
    refused([](auto& d) { d.environment = "a\nb"; }, "one line");
    refused([](auto& d) { d.label_pattern = "cu130/*"; }, "contains '/'");

    auto gitlab = github_publisher();
    gitlab.kind = oidc::publisher_kind::gitlab;
    gitlab.issuer.clear();
    gitlab.repository = "group/subgroup/project";
    gitlab.workflow = ".gitlab-ci.yml";
    gitlab.label_pattern = "+CU130*";
    auto normalized = oidc::normalize_publisher(gitlab);
    REQUIRE(normalized);
    CHECK(normalized->issuer == "https://gitlab.com");
    CHECK(normalized->workflow == ".gitlab-ci.yml");
    CHECK(normalized->label_pattern == "cu130*");
}

TEST_CASE("publisher: GitHub claims match on repository, owner name and id, workflow and environment", "[oidc]") {
    auto who = github_publisher();
    CHECK(mismatch(who, github_claims()) == "matched");
    auto lower = github_claims();
    lower["repository"] = "dao-ailab/Flash-Attention";  // GitHub names ignore case
    lower["repository_owner"] = "dao-ailab";
    lower["job_workflow_ref"] = "dao-ailab/Flash-Attention/.github/workflows/release.yml@0123abcd";  // by sha
    CHECK(mismatch(who, lower) == "matched");

    struct row {
        const char* claim;
        json::value value;  // null: the claim is left out
        const char* reason;
    };
    const row table[] = {
        {"repository", "attacker/flash-attention", "repository is 'attacker/flash-attention'"},
        {"repository_owner_id", "999", "another account holds its name"},  // the owner renamed, its name taken
        {"repository_owner_id", nullptr, "no \"repository_owner_id\" claim"},
        {"repository_owner_id", 123456, "no \"repository_owner_id\" claim"},  // not a string: cannot decide
        {"repository_owner", "someone-else", "repository_owner is 'someone-else'"},
        {"job_workflow_ref", "Dao-AILab/flash-attention/.github/workflows/other.yml@refs/tags/v2.8.3", "another workflow"},
        {"job_workflow_ref", "attacker/lib/.github/workflows/release.yml@refs/tags/v2.8.3", "another workflow"},
        {"job_workflow_ref", "Dao-AILab/flash-attention/.github/workflows/release.yml@refs/heads/evil", "another workflow"},
        {"event_name", "pull_request_target", "pull_request_target"},
    };
    for (const auto& [claim, value, reason] : table) {
        CAPTURE(claim, json::serialize(value));
        auto claims = github_claims();
        if (value.is_null()) claims.erase(claim);
        else claims[claim] = value;
        const auto message = mismatch(who, claims);
        CHECK_THAT(message, Catch::Contains(reason));
    }
    auto no_refs = github_claims();
    no_refs.erase("ref");
    no_refs.erase("sha");
    CHECK_THAT(mismatch(who, no_refs), Catch::Contains("neither \"ref\" nor \"sha\""));

    who.environment = "pypi";
    CHECK(mismatch(who, github_claims()) == "matched");  // GitHub environments ignore case
    auto staging = github_claims();
    staging["environment"] = "staging";
    CHECK_THAT(mismatch(who, staging), Catch::Contains("environment is 'staging'"));
    staging.erase("environment");
    CHECK_THAT(mismatch(who, staging), Catch::Contains("names none"));
}

TEST_CASE("publisher: GitLab claims match on project path, namespace and its id, and ci_config_ref_uri", "[oidc]") {
    oidc::publisher draft;
    draft.project = "nunchaku";
    draft.kind = oidc::publisher_kind::gitlab;
    draft.issuer = "https://gitlab.example.com";
    draft.repository = "ml/kernels/nunchaku";
    draft.owner_id = "42";
    draft.workflow = "ci/release.yml";
    draft.environment = "release";
    auto who = oidc::normalize_publisher(draft);
    REQUIRE(who);
    const json::object claims{{"project_path", "ml/kernels/nunchaku"},
                              {"namespace_path", "ml/kernels"},
                              {"namespace_id", "42"},
                              {"sub", "project_path:ml/kernels/nunchaku:ref_type:tag:ref:v1.0"},
                              {"ci_config_ref_uri", "gitlab.example.com/ml/kernels/nunchaku//ci/release.yml@refs/tags/v1.0"},
                              {"ref_path", "refs/tags/v1.0"},
                              {"sha", "abcdef"},
                              {"environment", "release"}};
    CHECK(mismatch(*who, claims) == "matched");
    const std::pair<const char*, const char*> changes[] = {
        {"namespace_id", "the group was renamed or deleted"},
        {"sub", "sub is"},
        {"ci_config_ref_uri", "another workflow"},
        {"environment", "environment is"},  // GitLab environments are case-sensitive
    };
    for (const auto& [claim, reason] : changes) {
        CAPTURE(claim);
        auto changed = claims;
        changed[claim] = claim == std::string_view("environment") ? "Release" : "x";
        CHECK_THAT(mismatch(*who, changed), Catch::Contains(reason));
    }
    auto github_shaped = github_claims();
    CHECK_THAT(mismatch(*who, github_shaped), Catch::Contains("no \"project_path\" claim"));
}

TEST_CASE("build labels: a limited token publishes only builds whose every label its pattern admits", "[auth]") {
    auth::token_grant grant;
    grant.name = "oidc-1-abc";
    grant.granted = auth::scope::upload;
    grant.project_patterns = {"flash-attn", "kernels"};
    // Without limits every build passes, a filename that names nothing too (the ingester says why).
    CHECK(auth::permits_file(grant, "flash_attn-2.8.3+cu128torch2.8-cp312-cp312-linux_x86_64.whl"));
    CHECK(auth::permits_file(grant, "not a file"));

    grant.build_limits = {{"flash-attn", "cu130*"}, {"kernels", "*"}};
    struct row {
        const char* filename;
        const char* expected;  // "" when permitted
    };
    const row table[] = {
        {"flash_attn-2.8.3+cu130torch2.10-cp312-cp312-linux_x86_64.whl", ""},
        {"flash_attn-2.8.3+CU130_Torch2.10-cp312-cp312-linux_x86_64.whl", ""},  // PEP 440 normalises the label
        {"flash_attn-2.8.3+cu128torch2.8-cp312-cp312-linux_x86_64.whl", "carries the label 'cu128torch2.8'"},
        {"flash_attn-2.8.3-cp312-cp312-linux_x86_64.whl", "carries no label"},
        {"flash_attn-2.8.3.tar.gz", "carries no label"},
        {"flash_attn-2.8.3-cp312-cp312-linux_x86_64-cu130_sm90.whl", ""},  // a PEP 825 variant label
        {"flash_attn-2.8.3-cp312-cp312-linux_x86_64-cu128_sm90.whl", "'cu128_sm90'"},
        {"flash_attn-2.8.3+cu130-cp312-cp312-linux_x86_64-cu128.whl", "'cu130', 'cu128'"},  // every label must fit
        {"kernels-1.0-py3-none-any.whl", ""},
        {"kernels-1.0+anything-py3-none-any.whl", ""},
        {"xformers-0.0.30+cu130-cp312-cp312-linux_x86_64.whl", "no build of project 'xformers'"},
        {"flash_attn-2.8.3+cu130.zip", "sdist"},
        {"garbage", ".whl"},
    };
    for (const auto& [filename, expected] : table) {
        CAPTURE(filename);
        auto permitted = auth::permits_file(grant, filename);
        if (std::string_view(expected).empty()) {
            CHECK(permitted);
        } else {
            REQUIRE_FALSE(permitted);
            CHECK_THAT(permitted.error().message, Catch::Contains(expected));
        }
    }
    CHECK(auth::permits_file(grant, "flash_attn-2.8.3+cu128-cp312-cp312-linux_x86_64.whl").error().kind ==
          error_kind::forbidden);
}

TEST_CASE("build labels: patterns are checked and normalised", "[auth]") {
    CHECK(auth::normalize_label_pattern("+CU130*").value() == "cu130*");
    CHECK(auth::normalize_label_pattern("*torch2.10*").value() == "*torch2.10*");
    CHECK(auth::normalize_label_pattern("cu128_sm9?").value() == "cu128_sm9?");
    for (const std::string_view bad : {"", "+", "cu130-*", "cu130 *", "cu130[0-9]", "\xc3\xa9"}) {
        CAPTURE(bad);
        CHECK_FALSE(auth::normalize_label_pattern(bad));
    }
    CHECK_FALSE(auth::normalize_label_pattern(std::string(101, 'a')));
}
