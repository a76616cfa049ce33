#include "wheelhouse/cli/publisher_command.hpp"

#include <cstdio>
#include <memory>

#include "wheelhouse/auth/token_store.hpp"
#include "wheelhouse/cli/commands.hpp"
#include "wheelhouse/cli/data_option.hpp"
#include "wheelhouse/cli/existing_data.hpp"
#include "wheelhouse/oidc/publisher_store.hpp"

namespace wheelhouse::cli {
namespace {

struct publisher_options {
    std::string data;
    std::string project;
    std::string kind = "github";
    oidc::publisher draft;
    std::int64_t id = 0;
};

int fail(const error& failure) {
    std::fprintf(stderr, "wheelhouse publisher: %s\n", failure.message.c_str());
    return failure.kind == error_kind::internal ? 2 : 1;
}

// The catalog of an existing data folder (a publisher for a folder that is not one helps nobody).
std::unique_ptr<catalog::catalog> open_catalog(const std::string& data) {
    auto opened = open_existing_data(data, nullptr, storage::owned_bytes::untouched);
    if (!opened) {
        std::fprintf(stderr, "wheelhouse publisher: %s\n", opened.error().message.c_str());
        return nullptr;
    }
    return std::move(opened->catalog);
}

int add(publisher_options& options) {
    auto kind = oidc::parse_publisher_kind(options.kind);
    if (!kind) return fail(kind.error());
    options.draft.kind = *kind;
    options.draft.project = options.project;
    auto catalog = open_catalog(options.data);
    if (!catalog) return 2;
    auth::token_store tokens(*catalog);
    oidc::publisher_store publishers(*catalog, tokens);
    auto added = publishers.add(options.draft, "cli");
    if (!added) return fail(added.error());
    std::printf("publisher %lld of %s: %s\n", static_cast<long long>(added->id), added->project.c_str(),
                oidc::describe(*added).c_str());
    return 0;
}

int list(const publisher_options& options) {
    auto catalog = open_catalog(options.data);
    if (!catalog) return 2;
    auth::token_store tokens(*catalog);
    oidc::publisher_store publishers(*catalog, tokens);
    auto found = publishers.list(options.project);
    if (!found) return fail(found.error());
    std::printf("%-5s %-24s %s\n", "ID", "PROJECT", "PUBLISHER");
    for (const auto& one : *found) {
        std::printf("%-5lld %-24s %s\n", static_cast<long long>(one.id), one.project.c_str(), oidc::describe(one).c_str());
    }
    return 0;
}

int remove(const publisher_options& options) {
    auto catalog = open_catalog(options.data);
    if (!catalog) return 2;
    auth::token_store tokens(*catalog);
    oidc::publisher_store publishers(*catalog, tokens);
    auto removed = publishers.remove(options.id, options.project, "cli");
    if (!removed) return fail(removed.error());
    std::fprintf(stderr, "publisher %lld of %s removed (%s); %lld unexpired tokens it minted revoked\n",
                 static_cast<long long>(options.id), removed->removed.project.c_str(),
                 oidc::describe(removed->removed).c_str(), static_cast<long long>(removed->tokens_revoked));
    return 0;
}

}  // namespace

void add_publisher_command(CLI::App& app) {
    auto options = std::make_shared<publisher_options>();
    auto* publisher = app.add_subcommand(
        "publisher", "Trusted publishers: CI workflows that trade an identity token (OIDC) for a short-lived upload token");
    publisher->require_subcommand(1);

    auto* add_command = publisher->add_subcommand(
        "add", "Let a CI workflow publish a project: GitHub Actions (and GitHub Enterprise) or GitLab CI");
    add_data_option(*add_command, options->data);
    add_command->add_option("--project", options->project, "The project it may publish (need not exist yet)")->required();
    add_command->add_option("--kind", options->kind, "github (GitHub Actions, GitHub Enterprise) or gitlab (default github)")
        ->capture_default_str();
    add_command->add_option("--repository", options->draft.repository, "OWNER/NAME (GitLab: GROUP/…/PROJECT)")->required();
    add_command->add_option("--owner-id", options->draft.owner_id,
                            "The owner's numeric id (GitHub: curl https://api.github.com/users/OWNER; GitLab: the "
                            "group ID), so a renamed owner's name cannot be taken over")
        ->required();
    add_command->add_option("--workflow", options->draft.workflow,
                            "The workflow file: release.yml (under .github/workflows/) or its path, e.g. .gitlab-ci.yml")
        ->required();
    add_command->add_option("--environment", options->draft.environment, "Only jobs in this deployment environment");
    add_command->add_option("--labels", options->draft.label_pattern,
                            "Only builds whose local or PEP 825 variant label matches this glob, e.g. 'cu130*'");
    add_command->add_option("--issuer", options->draft.issuer,
                            "The tokens' issuer (default https://token.actions.githubusercontent.com or "
                            "https://gitlab.com; GitHub Enterprise: https://HOST/_services/token)");
    add_command->callback([options] { set_exit_status(add(*options)); });

    auto* list_command = publisher->add_subcommand("list", "List trusted publishers, of one project or all");
    add_data_option(*list_command, options->data);
    list_command->add_option("--project", options->project, "Only this project's");
    list_command->callback([options] { set_exit_status(list(*options)); });

    auto* remove_command = publisher->add_subcommand(
        "remove", "Remove a trusted publisher by id; the upload tokens it minted stop working at once");
    add_data_option(*remove_command, options->data);
    remove_command->add_option("--project", options->project, "Its project")->required();
    remove_command->add_option("id", options->id, "Its id, as `publisher list` shows it")->required();
    remove_command->callback([options] { set_exit_status(remove(*options)); });
}

}  // namespace wheelhouse::cli
