#include "wheelhouse/oidc/publisher.hpp"

#include <algorithm>
#include <array>

#include <boost/json.hpp>
#include <boost/url/parse.hpp>

#include "wheelhouse/auth/build_labels.hpp"
#include "wheelhouse/oidc/jwt.hpp"
#include "wheelhouse/pep503/name.hpp"
#include "wheelhouse/text/ascii.hpp"
#include "wheelhouse/text/quoted.hpp"

namespace wheelhouse::oidc {
namespace {

namespace json = boost::json;
using text::equals_ignoring_case;

constexpr std::size_t max_field_length = 255;

bool is_path_character(char c) noexcept {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_' ||
           c == '-' || c == '/';
}

// "a/b", "a/b/c": segments of path characters, none empty, none "." or "..".
bool is_slash_path(std::string_view path, std::size_t min_segments, std::size_t max_segments) {
    if (path.empty() || path.size() > max_field_length || !std::all_of(path.begin(), path.end(), is_path_character))
        return false;
    std::size_t segments = 0;
    for (std::size_t start = 0;;) {
        const auto slash = path.find('/', start);
        const auto segment = path.substr(start, slash == std::string_view::npos ? std::string_view::npos : slash - start);
        if (segment.empty() || segment == "." || segment == "..") return false;
        ++segments;
        if (slash == std::string_view::npos) break;
        start = slash + 1;
    }
    return segments >= min_segments && segments <= max_segments;
}

// The part before the last '/': GitHub's owner, GitLab's namespace.
std::string_view owner_of(std::string_view repository) { return repository.substr(0, repository.rfind('/')); }

result<void> check_issuer(const std::string& issuer) {
    const auto url = boost::urls::parse_uri(issuer);
    if (!url || url->scheme() != "https" || url->encoded_host().empty() || url->has_userinfo() || url->has_query() ||
        url->has_fragment()) {
        return invalid("issuer " + text::quoted(issuer) + " is not an https:// URL without user, query or fragment; write "
                       "it as its tokens' \"iss\" says, e.g. " + std::string(github_issuer));
    }
    return {};
}

result<void> check_workflow(publisher& draft) {
    if (draft.kind == publisher_kind::github && draft.workflow.find('/') == std::string::npos)
        draft.workflow = ".github/workflows/" + draft.workflow;
    const bool yaml = draft.workflow.ends_with(".yml") || draft.workflow.ends_with(".yaml");
    if (!yaml || !is_slash_path(draft.workflow, 1, 32)) {
        return invalid("workflow " + text::quoted(draft.workflow) + " must be the workflow file's path in the repository, "
                       "ending in .yml or .yaml, such as .github/workflows/release.yml or .gitlab-ci.yml");
    }
    return {};
}

result<void> check_environment(const std::string& environment) {
    if (environment.size() > max_field_length) return invalid("environment is longer than 255 bytes");
    const bool printable = std::all_of(environment.begin(), environment.end(),
                                       [](char c) { return static_cast<unsigned char>(c) >= 0x20 && c != 0x7f; });
    if (!printable) return invalid("environment " + text::quoted(environment) + " must be one line of printable text");
    return {};
}

// A claim the match needs, as a string; forbidden when it is missing or of another type.
result<std::string_view> required_claim(const json::object& claims, std::string_view name) {
    const auto value = string_claim(claims, name);
    if (!value || value->empty())
        return make_error(error_kind::forbidden, "the identity token has no \"" + std::string(name) + "\" claim, "
                                                 "which a trusted publisher is matched on");
    return *value;
}

error differs(std::string_view claim, std::string_view got, std::string_view expected, std::string_view why = {}) {
    std::string message = "the token's " + std::string(claim) + " is " + text::quoted(got) + ", but the trusted publisher "
                          "expects " + text::quoted(expected);
    if (!why.empty()) message.append(": ").append(why);
    return make_error(error_kind::forbidden, std::move(message));
}

// job_workflow_ref or ci_config_ref_uri: `prefix` + "@" + one of the refs the token names.
result<void> check_workflow_ref(std::string_view claim_name, std::string_view claim, const std::string& prefix,
                                std::initializer_list<std::string_view> refs) {
    for (const auto ref : refs) {
        if (!ref.empty() && claim == prefix + "@" + std::string(ref)) return {};
    }
    return differs(claim_name, claim, prefix + "@<ref>", "another workflow file (or a reusable one) ran");
}

result<void> check_environment_claim(const publisher& who, const json::object& claims, bool ignoring_case) {
    if (who.environment.empty()) return {};
    const auto environment = string_claim(claims, "environment");
    if (!environment || environment->empty())
        return make_error(error_kind::forbidden, "the trusted publisher needs the job to run in the environment " +
                                                     text::quoted(who.environment) + ", and the token names none");
    const bool same = ignoring_case ? equals_ignoring_case(*environment, who.environment) : *environment == who.environment;
    if (!same) return differs("environment", *environment, who.environment);
    return {};
}

result<void> match_github(const publisher& who, const json::object& claims) {
    auto repository = required_claim(claims, "repository");
    if (!repository) return repository.error();
    if (!equals_ignoring_case(*repository, who.repository)) return differs("repository", *repository, who.repository);
    auto owner = required_claim(claims, "repository_owner");
    if (!owner) return owner.error();
    if (!equals_ignoring_case(*owner, owner_of(who.repository)))
        return differs("repository_owner", *owner, owner_of(who.repository));
    auto owner_id = required_claim(claims, "repository_owner_id");
    if (!owner_id) return owner_id.error();
    if (*owner_id != who.owner_id) {
        return differs("repository_owner_id", *owner_id, who.owner_id,
                       "the owner was renamed or deleted and another account holds its name");
    }
    if (string_claim(claims, "event_name") == "pull_request_target")
        return make_error(error_kind::forbidden, "a workflow run by pull_request_target (which runs on a fork's "
                                                 "request) may not publish");
    auto workflow_ref = required_claim(claims, "job_workflow_ref");
    if (!workflow_ref) return workflow_ref.error();
    const auto ref = string_claim(claims, "ref").value_or("");
    const auto sha = string_claim(claims, "sha").value_or("");
    if (ref.empty() && sha.empty())
        return make_error(error_kind::forbidden, "the identity token names neither \"ref\" nor \"sha\"");
    const auto prefix = std::string(*repository) + "/" + who.workflow;
    if (auto same = check_workflow_ref("job_workflow_ref", *workflow_ref, prefix, {ref, sha}); !same) return same;
    return check_environment_claim(who, claims, true);  // GitHub's environment names ignore case
}

// GitLab names the instance without its scheme in ci_config_ref_uri: "gitlab.com/…".
std::string_view instance_of(std::string_view issuer) {
    issuer.remove_prefix(std::string_view("https://").size());
    while (issuer.ends_with('/')) issuer.remove_suffix(1);
    return issuer;
}

result<void> match_gitlab(const publisher& who, const json::object& claims) {
    auto project_path = required_claim(claims, "project_path");
    if (!project_path) return project_path.error();
    if (!equals_ignoring_case(*project_path, who.repository)) return differs("project_path", *project_path, who.repository);
    auto namespace_path = required_claim(claims, "namespace_path");
    if (!namespace_path) return namespace_path.error();
    if (!equals_ignoring_case(*namespace_path, owner_of(who.repository)))
        return differs("namespace_path", *namespace_path, owner_of(who.repository));
    auto namespace_id = required_claim(claims, "namespace_id");
    if (!namespace_id) return namespace_id.error();
    if (*namespace_id != who.owner_id) {
        return differs("namespace_id", *namespace_id, who.owner_id,
                       "the group was renamed or deleted and another holds its path");
    }
    auto subject = required_claim(claims, "sub");
    if (!subject) return subject.error();
    if (!text::starts_with_ignoring_case(*subject, "project_path:" + std::string(*project_path) + ":"))
        return differs("sub", *subject, "project_path:" + who.repository + ":…");
    auto config_ref = required_claim(claims, "ci_config_ref_uri");
    if (!config_ref) return config_ref.error();
    auto ref_path = required_claim(claims, "ref_path");
    if (!ref_path) return ref_path.error();
    auto sha = required_claim(claims, "sha");
    if (!sha) return sha.error();
    const auto prefix = std::string(instance_of(who.issuer)) + "/" + std::string(*project_path) + "//" + who.workflow;
    if (auto same = check_workflow_ref("ci_config_ref_uri", *config_ref, prefix, {*ref_path, *sha}); !same) return same;
    return check_environment_claim(who, claims, false);  // GitLab's are case-sensitive
}

}  // namespace

std::string_view to_string(publisher_kind kind) noexcept { return kind == publisher_kind::gitlab ? "gitlab" : "github"; }

result<publisher_kind> parse_publisher_kind(std::string_view text) {
    if (text == "github") return publisher_kind::github;
    if (text == "gitlab") return publisher_kind::gitlab;
    return invalid("publisher kind " + text::quoted(text) + " is not github or gitlab (GitHub Enterprise is github with "
                   "--issuer https://HOST/_services/token; self-managed GitLab is gitlab with --issuer https://HOST)");
}

std::string_view default_issuer(publisher_kind kind) noexcept {
    return kind == publisher_kind::gitlab ? gitlab_issuer : github_issuer;
}

result<publisher> normalize_publisher(publisher draft) {
    if (!pep503::is_valid_project_name(draft.project))
        return invalid("project " + text::quoted(draft.project) + " is not a valid project name (PEP 508)");
    draft.project = pep503::normalize(draft.project);
    if (draft.issuer.empty()) draft.issuer = std::string(default_issuer(draft.kind));
    if (auto checked = check_issuer(draft.issuer); !checked) return checked.error();
    const bool github = draft.kind == publisher_kind::github;
    if (!is_slash_path(draft.repository, 2, github ? 2 : 20)) {
        return invalid("repository " + text::quoted(draft.repository) + (github ? " must be OWNER/NAME, as in github.com/OWNER/NAME"
                                                                          : " must be GROUP/…/PROJECT, as in its GitLab URL"));
    }
    if (draft.owner_id.empty() || draft.owner_id.size() > 20 ||
        !std::all_of(draft.owner_id.begin(), draft.owner_id.end(), [](char c) { return c >= '0' && c <= '9'; })) {
        return invalid(github ? "give the owner's numeric id (--owner-id): curl https://api.github.com/users/OWNER "
                                "shows it as \"id\"; the name alone can be taken over after a rename"
                              : "give the group's numeric id (--owner-id): GitLab shows it as the group ID on the "
                                "group's page; the path alone can be taken over after a rename");
    }
    if (auto checked = check_workflow(draft); !checked) return checked.error();
    if (auto checked = check_environment(draft.environment); !checked) return checked.error();
    if (!draft.label_pattern.empty()) {
        auto pattern = auth::normalize_label_pattern(draft.label_pattern);
        if (!pattern) return pattern.error();
        draft.label_pattern = std::move(*pattern);
    }
    return draft;
}

std::string describe(const publisher& who) {
    std::string line = std::string(to_string(who.kind)) + " " + who.repository + " (owner id " + who.owner_id + ") " +
                       who.workflow;
    if (who.issuer != default_issuer(who.kind)) line += " issuer=" + who.issuer;
    if (!who.environment.empty()) line += " env=" + who.environment;
    if (!who.label_pattern.empty()) line += " labels=" + who.label_pattern;
    return line;
}

result<void> match_claims(const publisher& who, const json::object& claims) {
    return who.kind == publisher_kind::gitlab ? match_gitlab(who, claims) : match_github(who, claims);
}

bool names_repository(const publisher& who, const json::object& claims) {
    const auto named = string_claim(claims, who.kind == publisher_kind::gitlab ? "project_path" : "repository");
    return named && equals_ignoring_case(*named, who.repository);
}

json::object audited_claims(const publisher& who, const json::object& claims) {
    static constexpr std::array github_claims{"repository", "repository_owner", "repository_owner_id", "job_workflow_ref",
                                              "ref", "sha", "environment", "event_name", "run_id", "run_attempt", "actor"};
    static constexpr std::array gitlab_claims{"project_path", "namespace_path", "namespace_id", "ci_config_ref_uri",
                                              "ref_path", "sha", "environment", "pipeline_source", "pipeline_id",
                                              "job_id", "user_login"};
    json::object kept;
    const auto keep = [&](const auto& names) {
        for (const char* name : names) {
            if (const auto value = string_claim(claims, name)) kept[name] = *value;
        }
    };
    if (who.kind == publisher_kind::gitlab) keep(gitlab_claims);
    else keep(github_claims);
    return kept;
}

}  // namespace wheelhouse::oidc
