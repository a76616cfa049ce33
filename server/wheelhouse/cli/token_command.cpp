#include "wheelhouse/cli/token_command.hpp"

#include <CLI/Option.hpp>

#include <cstdio>
#include <ctime>
#include <memory>

#include "wheelhouse/auth/duration.hpp"
#include "wheelhouse/auth/token_store.hpp"
#include "wheelhouse/catalog/catalog.hpp"
#include "wheelhouse/cli/commands.hpp"
#include "wheelhouse/cli/data_option.hpp"
#include "wheelhouse/render/simple_pages.hpp"

namespace wheelhouse::cli {
namespace {

struct token_options {
    std::string data;
    std::string name;
    std::string scope = "upload";
    std::vector<std::string> projects;
    std::string expires;
};

std::unique_ptr<catalog::catalog> open_catalog(const std::string& data) {
    auto opened = catalog::catalog::open(std::filesystem::path(data) / "catalog.db");
    if (!opened) {
        std::fprintf(stderr, "wheelhouse token: cannot open the catalog in %s: %s\n", data.c_str(),
                     opened.error().message.c_str());
        return nullptr;
    }
    return std::move(opened).value();
}

int fail(const error& failure) {
    std::fprintf(stderr, "wheelhouse token: %s\n", failure.message.c_str());
    return failure.kind == error_kind::internal ? 2 : 1;
}

std::string when(const std::optional<std::int64_t>& ms) {
    if (!ms) return "-";
    return render::iso8601_utc(*ms).substr(0, 19) + "Z";
}

int create(const token_options& options) {
    auto scope = auth::parse_scope(options.scope);
    if (!scope) return fail(scope.error());
    std::optional<std::chrono::seconds> lifetime;
    if (!options.expires.empty()) {
        auto parsed = auth::parse_duration(options.expires);
        if (!parsed) return fail(parsed.error());
        lifetime = *parsed;
    }
    auto catalog = open_catalog(options.data);
    if (!catalog) return 2;
    auth::token_store tokens(*catalog);
    auto created = tokens.create(options.name, *scope, options.projects, lifetime, "cli");
    if (!created) return fail(created.error());
    // The secret goes to stdout alone, so `TOKEN=$(wheelhouse token create …)` works.
    std::printf("%s\n", created->secret.c_str());
    std::string grant = options.scope;
    for (const auto& pattern : created->record.grant.project_patterns) grant += " " + pattern;
    if (created->record.expires_ms) grant += ", expires " + when(created->record.expires_ms);
    std::fprintf(stderr, "token '%s' (%s) created; it is shown only this once\n", options.name.c_str(), grant.c_str());
    return 0;
}

int list(const token_options& options) {
    auto catalog = open_catalog(options.data);
    if (!catalog) return 2;
    auth::token_store tokens(*catalog);
    auto listed = tokens.list();
    if (!listed) return fail(listed.error());
    std::printf("%-24s %-7s %-24s %-21s %-21s %-21s %s\n", "NAME", "SCOPE", "PROJECTS", "CREATED", "EXPIRES",
                "LAST USED", "STATE");
    const auto now = std::chrono::duration_cast<std::chrono::milliseconds>(
                         std::chrono::system_clock::now().time_since_epoch()).count();
    for (const auto& record : *listed) {
        std::string projects;
        for (const auto& pattern : record.grant.project_patterns) projects += (projects.empty() ? "" : ",") + pattern;
        if (projects.empty()) projects = "*";
        const char* state = record.revoked_ms ? "revoked" : (record.usable_at(now) ? "active" : "expired");
        std::printf("%-24s %-7s %-24s %-21s %-21s %-21s %s\n", record.grant.name.c_str(),
                    std::string(auth::to_string(record.grant.granted)).c_str(), projects.c_str(),
                    when(record.created_ms).c_str(), when(record.expires_ms).c_str(), when(record.last_used_ms).c_str(),
                    state);
    }
    return 0;
}

int revoke(const token_options& options) {
    auto catalog = open_catalog(options.data);
    if (!catalog) return 2;
    auth::token_store tokens(*catalog);
    auto revoked = tokens.revoke(options.name, "cli");
    if (!revoked) return fail(revoked.error());
    std::fprintf(stderr, "token '%s' revoked; it no longer authenticates\n", options.name.c_str());
    return 0;
}

}  // namespace

void add_token_command(CLI::App& app) {
    auto options = std::make_shared<token_options>();
    auto* token = app.add_subcommand("token", "Create, list and revoke API tokens (only their hashes are stored)");
    token->require_subcommand(1);

    auto* create_command = token->add_subcommand(
        "create", "Create a token and print it once on stdout.\n"
                  "Use it with twine (-u __token__ -p TOKEN), curl (-u __token__:TOKEN) or Authorization: Bearer.");
    add_data_option(*create_command, options->data);
    create_command->add_option("--name", options->name, "A unique name, e.g. ci-flash-attn (logged, shown as uploader)")
        ->required();
    create_command->add_option("--scope", options->scope, "read (private index), upload, or admin (default upload)")
        ->capture_default_str();
    create_command->add_option("--project", options->projects,
                               "Limit to this project name or glob (nunchaku-*); repeat for more; default all");
    create_command->add_option("--expires", options->expires, "Lifetime such as 90d, 12h, 1y; default never");
    create_command->callback([options] { set_exit_status(create(*options)); });

    auto* list_command = token->add_subcommand("list", "List tokens with scope, projects, expiry and last use");
    add_data_option(*list_command, options->data);
    list_command->callback([options] { set_exit_status(list(*options)); });

    auto* revoke_command = token->add_subcommand("revoke", "Revoke a token by name; it stops working at once");
    add_data_option(*revoke_command, options->data);
    revoke_command->add_option("name", options->name, "The token's name")->required();
    revoke_command->callback([options] { set_exit_status(revoke(*options)); });
}

}  // namespace wheelhouse::cli
