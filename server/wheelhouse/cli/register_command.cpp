#include "wheelhouse/cli/register_command.hpp"

#include <CLI/Validators.hpp>

#include <cstdio>
#include <memory>
#include <optional>

#include "wheelhouse/catalog/catalog.hpp"
#include "wheelhouse/cli/commands.hpp"
#include "wheelhouse/cli/data_option.hpp"
#include "wheelhouse/config/settings.hpp"
#include "wheelhouse/error_text.hpp"
#include "wheelhouse/ingest/ingester.hpp"
#include "wheelhouse/remote/github_api.hpp"
#include "wheelhouse/remote/http_client.hpp"
#include "wheelhouse/remote/registrar.hpp"
#include "wheelhouse/remote/release_import.hpp"
#include "wheelhouse/storage/blob_store.hpp"

namespace wheelhouse::cli {
namespace {

struct remote_command_options {
    std::optional<config::settings> settings;  // resolved once parsed
    std::vector<std::string> urls;
    std::string repository;
    std::string tag;
    std::string sha256;
    std::string mode;
    bool verify = false;
};

// What a command needs open: the data folder's catalog and store, the client, the registrar.
// Its parts refer to each other, so it stays where open_session filled it.
struct remote_session {
    remote_session() = default;
    remote_session(const remote_session&) = delete;
    remote_session& operator=(const remote_session&) = delete;

    std::unique_ptr<catalog::catalog> catalog;
    std::optional<storage::blob_store> store;
    std::optional<ingest::ingester> ingester;
    std::unique_ptr<remote::http_client> client;
    std::optional<remote::github_api> github;
    std::optional<remote::registrar> registrar;
};

void add_fetching_options(CLI::App& command, remote_command_options& options) {
    add_settings_options(command, config::option_set::fetching,
                         [&options](config::settings resolved) { options.settings = std::move(resolved); });
    command.add_option("--mode", options.mode, "how downloads are served: redirect, proxy or cache (default: the "
                                               "configured remote download mode)")
        ->check(CLI::IsMember({"redirect", "proxy", "cache"}));
    command.add_flag("--verify", options.verify,
                     "stream each whole asset once and check it against its digest, even when one is known");
}

result<void> open_session(remote_session& session, const config::settings& settings) {
    auto store = storage::blob_store::open(settings.data, nullptr, storage::owned_bytes::untouched);
    if (!store) return store.error();
    session.store.emplace(std::move(store).value());
    auto catalog = catalog::catalog::open(settings.data / "catalog.db");
    if (!catalog) return catalog.error();
    session.catalog = std::move(catalog).value();
    session.ingester.emplace(*session.catalog, *session.store);
    session.client = std::make_unique<remote::http_client>(config::client_settings_from(settings));
    remote::github_settings github;
    github.api_url = settings.github_api_url;
    github.token = settings.github_token;
    session.github.emplace(*session.client, github);
    remote::registrar_settings registrar;
    registrar.default_mode = settings.remote_download_mode;
    registrar.max_file_bytes = settings.max_upload_bytes;
    session.registrar.emplace(*session.client, *session.ingester, *session.github, registrar);
    return {};
}

std::string size_text(std::uint64_t bytes) {
    char text[32];
    if (bytes >= (1u << 20)) std::snprintf(text, sizeof text, "%.1f MiB", static_cast<double>(bytes) / (1 << 20));
    else if (bytes >= 1024) std::snprintf(text, sizeof text, "%.1f KiB", static_cast<double>(bytes) / 1024);
    else std::snprintf(text, sizeof text, "%llu B", static_cast<unsigned long long>(bytes));
    return text;
}

// One line per asset: outcome, filename, what was read of it, and the digest's source or the reason.
void print(const remote::registration_report& report) {
    const std::string name = report.filename.empty() ? report.url : report.filename;
    if (report.outcome == remote::registration_outcome::rejected) {
        std::printf("rejected  %s: %s (read %s)\n", name.c_str(), report.failure ? describe(*report.failure).c_str() : "",
                    size_text(report.bytes_transferred).c_str());
        return;
    }
    std::printf("%-9s %s  %s  sha256 %s (%s)  read %s of %s in %llu requests\n",
                std::string(remote::to_string(report.outcome)).c_str(), name.c_str(),
                std::string(catalog::to_string(report.mode)).c_str(), report.sha256.c_str(),
                std::string(remote::to_string(report.sha256_source)).c_str(), size_text(report.bytes_transferred).c_str(),
                size_text(report.size).c_str(), static_cast<unsigned long long>(report.requests));
}

std::optional<catalog::download_mode> mode_of(const remote_command_options& options) {
    if (options.mode.empty()) return std::nullopt;
    return catalog::parse_download_mode(options.mode);
}

int run_register(const remote_command_options& options) {
    remote_session session;
    if (auto opened = open_session(session, *options.settings); !opened) {
        std::fprintf(stderr, "wheelhouse register: %s\n", opened.error().message.c_str());
        return 2;
    }
    if (!options.sha256.empty() && options.urls.size() != 1) {
        std::fprintf(stderr, "wheelhouse register: --sha256 names one asset's digest; give exactly one URL with it\n");
        return 2;
    }
    std::size_t rejected = 0;
    for (const auto& url : options.urls) {
        remote::registration_request request;
        request.url = url;
        if (!options.sha256.empty()) request.sha256 = options.sha256;
        request.mode = mode_of(options);
        request.verify = options.verify;
        request.actor = "cli";
        auto report = session.registrar->register_asset(request);
        print(report);
        if (report.outcome == remote::registration_outcome::rejected) ++rejected;
    }
    return rejected == 0 ? 0 : 1;
}

int run_import(const remote_command_options& options) {
    auto repository = remote::parse_repository(options.repository);
    if (!repository) {
        std::fprintf(stderr, "wheelhouse import-release: %s\n", repository.error().message.c_str());
        return 2;
    }
    remote_session session;
    if (auto opened = open_session(session, *options.settings); !opened) {
        std::fprintf(stderr, "wheelhouse import-release: %s\n", opened.error().message.c_str());
        return 2;
    }
    remote::import_request request;
    request.repository = std::move(repository).value();
    request.tag = options.tag;
    request.mode = mode_of(options);
    request.verify = options.verify;
    request.actor = "cli";
    auto imported = remote::import_release(*session.github, *session.registrar, request);
    if (!imported) {
        std::fprintf(stderr, "wheelhouse import-release: %s\n", imported.error().message.c_str());
        return 1;
    }
    for (const auto& report : imported->files) print(report);
    for (const auto& name : imported->skipped) std::printf("skipped   %s: no wheel or PEP 625 sdist\n", name.c_str());
    std::uint64_t bytes = 0;
    for (const auto& report : imported->files) bytes += report.bytes_transferred;
    std::printf("%zu added, %zu present, %zu rejected, %zu skipped; %s read\n",
                imported->count(remote::registration_outcome::added), imported->count(remote::registration_outcome::present),
                imported->count(remote::registration_outcome::rejected), imported->skipped.size(), size_text(bytes).c_str());
    return imported->count(remote::registration_outcome::rejected) == 0 ? 0 : 1;
}

}  // namespace

void add_register_command(CLI::App& app) {
    auto options = std::make_shared<remote_command_options>();
    CLI::App* command = app.add_subcommand(
        "register", "Add wheels and sdists that stay where they are (GitHub release assets) to the index, by URL");
    add_fetching_options(*command, *options);
    command->add_option("--sha256", options->sha256, "the asset's SHA-256 (hex), when known; one URL only");
    command->add_option("urls", options->urls, "asset URLs ending in a wheel's or an sdist's filename")->required();
    command->footer("Of a wheel, reads only the zip's end, directory, WHEEL and METADATA by Range requests; the SHA-256 "
                    "comes from --sha256, GitHub's asset digest, or one pass over the asset. An sdist is read once, "
                    "whole (gzip has no end to seek to), and checked as an upload is.\nExit status: 0 when every URL was "
                    "added or already present, 1 when any was rejected, 2 when DATA cannot be opened.");
    command->callback([options] { set_exit_status(run_register(*options)); });
}

void add_import_release_command(CLI::App& app) {
    auto options = std::make_shared<remote_command_options>();
    CLI::App* command = app.add_subcommand(
        "import-release", "Register every wheel and sdist of a GitHub release (listed through the GitHub API)");
    add_fetching_options(*command, *options);
    command->add_option("repository", options->repository, "OWNER/REPO")->required();
    command->add_option("tag", options->tag, "the release's tag")->required();
    command->footer("Exit status: 0 when every wheel and sdist was added or already present, 1 when any was rejected or the "
                    "release cannot be listed, 2 when DATA cannot be opened.");
    command->callback([options] { set_exit_status(run_import(*options)); });
}

}  // namespace wheelhouse::cli
