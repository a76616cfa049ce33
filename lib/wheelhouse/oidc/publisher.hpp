#pragma once
// A trusted publisher: the CI workflow a project trusts to publish it, named as the issuer's
// signed claims name it. Matching follows Warehouse (warehouse/oidc/models/github.py, gitlab.py)
// or is stricter: the owner is matched on its immutable id as well as its name, so a repository
// re-created under a renamed or deleted owner's name publishes nothing. Pure.

#include <cstdint>
#include <string>
#include <string_view>

#include <boost/json/object.hpp>

#include "wheelhouse/result.hpp"

namespace wheelhouse::oidc {

// Which claims name the repository, its owner and the workflow.
enum class publisher_kind {
    // GitHub Actions and GitHub Enterprise Server: repository, repository_owner,
    // repository_owner_id, job_workflow_ref ("owner/repo/.github/workflows/x.yml@ref").
    github,
    // GitLab.com and self-managed GitLab: project_path, namespace_path, namespace_id,
    // ci_config_ref_uri ("gitlab.com/group/project//.gitlab-ci.yml@refs/heads/main").
    gitlab,
};

std::string_view to_string(publisher_kind kind) noexcept;
result<publisher_kind> parse_publisher_kind(std::string_view text);

inline constexpr std::string_view github_issuer = "https://token.actions.githubusercontent.com";
inline constexpr std::string_view gitlab_issuer = "https://gitlab.com";
// The issuer a kind's tokens come from when none is given (GitHub.com, GitLab.com).
std::string_view default_issuer(publisher_kind kind) noexcept;

struct publisher {
    std::int64_t id = 0;
    std::string project;  // PEP 503-normalised; it may not exist yet (its first upload makes it)
    publisher_kind kind = publisher_kind::github;
    std::string issuer;       // the tokens' "iss", exactly
    std::string repository;   // "owner/name" (GitLab: "group/subgroup/project"), as the admin wrote it
    std::string owner_id;     // the owner's immutable id: repository_owner_id, namespace_id
    std::string workflow;     // path in the repository: ".github/workflows/release.yml", ".gitlab-ci.yml"
    std::string environment;  // the deployment environment it must run in; "" for any
    std::string label_pattern;  // the builds it may publish (auth/build_labels.hpp); "" for any
    std::int64_t created_ms = 0;
    std::string created_by;
};

// Checks and normalises a publisher as an admin gave it: the project name (PEP 503), an https://
// issuer (the kind's default when empty), the repository's shape for its kind, an owner id of
// digits, a workflow path ending in .yml or .yaml (a bare GitHub file name is put under
// .github/workflows/), an environment of one printable line, and the label pattern. `invalid`
// with what to write otherwise.
result<publisher> normalize_publisher(publisher draft);

// One line for logs, the audit log and `publisher list`:
// "github Dao-AILab/flash-attention (owner id 123) .github/workflows/release.yml env=pypi labels=cu130*".
std::string describe(const publisher& who);

// Whether a verified token's claims are this publisher's: success, or `forbidden` naming the
// first claim that differs and what it should be. A claim this publisher's kind requires that
// is missing, or not a string, fails the match (a check that cannot decide refuses).
result<void> match_claims(const publisher& who, const boost::json::object& claims);

// Whether the claims name this publisher's repository at all (ignoring case, as GitHub and
// GitLab do): for choosing which near miss to report when no publisher matches.
bool names_repository(const publisher& who, const boost::json::object& claims);

// The claims worth keeping with a minted token, as JSON for the audit log: repository, owner and
// its id, the workflow ref, ref, sha, environment, run and event.
boost::json::object audited_claims(const publisher& who, const boost::json::object& claims);

}  // namespace wheelhouse::oidc
