#include "wheelhouse/cli/upstream_commands.hpp"

#include <CLI/Option.hpp>

#include <cstdio>
#include <memory>

#include "wheelhouse/auth/duration.hpp"
#include "wheelhouse/auth/scope.hpp"
#include "wheelhouse/catalog/audit.hpp"
#include "wheelhouse/catalog/upstream_rows.hpp"
#include "wheelhouse/cli/commands.hpp"
#include "wheelhouse/cli/data_option.hpp"
#include "wheelhouse/cli/existing_data.hpp"
#include "wheelhouse/error_text.hpp"
#include "wheelhouse/pep503/name.hpp"
#include "wheelhouse/render/simple_pages.hpp"

namespace wheelhouse::cli {
namespace {

struct reserve_options {
    std::string data;
    std::vector<std::string> patterns;
    std::string reason;
    bool list = false;
    std::string release;
};

int fail(std::string_view command, const error& failure) {
    std::fprintf(stderr, "wheelhouse %s: %s\n", std::string(command).c_str(), describe(failure).c_str());
    return failure.kind == error_kind::internal ? 2 : 1;
}

int list_reservations(catalog::catalog& catalog) {
    auto listed = catalog::list_reservations(catalog);
    if (!listed) return fail("reserve", listed.error());
    std::printf("%-32s %-21s %-16s %s\n", "PATTERN", "RESERVED", "BY", "REASON");
    for (const auto& each : *listed) {
        std::printf("%-32s %-21s %-16s %s\n", each.pattern.c_str(),
                    (render::iso8601_utc(each.created_ms).substr(0, 19) + "Z").c_str(), each.created_by.c_str(),
                    each.reason.value_or("").c_str());
    }
    return 0;
}

int reserve(const reserve_options& options) {
    auto data = open_existing_data(options.data, nullptr, storage::owned_bytes::untouched);
    if (!data) return fail("reserve", data.error());
    auto& catalog = *data->catalog;
    if (options.list) return list_reservations(catalog);
    if (!options.release.empty()) {
        auto pattern = auth::normalize_project_pattern(options.release);
        if (!pattern) return fail("reserve", pattern.error());
        auto released = catalog::release_name(catalog, *pattern, "cli");
        if (!released) return fail("reserve", released.error());
        if (!*released) return fail("reserve", invalid("no reservation '" + *pattern + "'; see --list"));
        std::fprintf(stderr, "'%s' is no longer reserved: upstream indexes may serve names under it that have no "
                             "files here\n", pattern->c_str());
        return 0;
    }
    if (options.patterns.empty()) return fail("reserve", invalid("give the names or patterns to reserve, or --list"));
    const auto reason = options.reason.empty() ? std::nullopt : std::optional<std::string>(options.reason);
    for (const auto& given : options.patterns) {
        auto pattern = auth::normalize_project_pattern(given);
        if (!pattern) return fail("reserve", pattern.error());
        auto added = catalog::reserve_name(catalog, *pattern, reason, "cli");
        if (!added) return fail("reserve", added.error());
        std::fprintf(stderr, "'%s' %s: owned by this index, never served from an upstream\n", pattern->c_str(),
                     *added ? "reserved" : "was reserved already");
    }
    return 0;
}

struct prune_options {
    std::string data;
    std::string older_than;
    std::string project;
};

// The kept copies of upstream pages (DATA/upstream/<upstream>/<project>.meta and .body) last
// confirmed before `before` (their .meta's time), of `project` when given.
std::size_t prune_pages(const std::filesystem::path& folder, std::filesystem::file_time_type before,
                        const std::string& project) {
    std::size_t removed = 0;
    std::error_code failure;
    for (std::filesystem::recursive_directory_iterator walk(folder, failure), end; !failure && walk != end;
         walk.increment(failure)) {
        const auto meta = walk->path();
        if (meta.extension() != ".meta" || (!project.empty() && meta.stem() != project)) continue;
        std::error_code unreadable;
        if (std::filesystem::last_write_time(meta, unreadable) >= before && !unreadable) continue;
        auto body = meta;
        body.replace_extension(".body");
        std::filesystem::remove(body, unreadable);
        if (std::filesystem::remove(meta, unreadable)) ++removed;
    }
    return removed;
}

int prune(const prune_options& options) {
    auto data = open_existing_data(options.data, nullptr, storage::owned_bytes::untouched);
    if (!data) return fail("upstream-prune", data.error());
    auto kept_before = std::numeric_limits<std::int64_t>::max();
    auto pages_before = std::filesystem::file_time_type::max();
    if (!options.older_than.empty()) {
        auto age = auth::parse_duration(options.older_than);
        if (!age) return fail("upstream-prune", age.error());
        kept_before = catalog::now_ms() - std::chrono::duration_cast<std::chrono::milliseconds>(*age).count();
        pages_before = std::filesystem::file_time_type::clock::now() - *age;
    }
    std::optional<std::string> project;
    if (!options.project.empty()) project = pep503::normalize(options.project);
    const auto& store = *data->store;
    auto dropped = catalog::drop_kept_files(*data->catalog, kept_before, project,
                                            [&](std::string_view sha256) { return store.remove(sha256); });
    if (!dropped) return fail("upstream-prune", dropped.error());
    std::uint64_t bytes = 0;
    for (const auto& row : *dropped) bytes += row.size;
    const auto pages = prune_pages(std::filesystem::path(options.data) / "upstream", pages_before, project.value_or(""));
    std::printf("wheelhouse upstream-prune: %zu kept upstream files (%llu bytes) and %zu kept pages dropped\n",
                dropped->size(), static_cast<unsigned long long>(bytes), pages);
    return 0;
}

}  // namespace

void add_reserve_command(CLI::App& app) {
    auto options = std::make_shared<reserve_options>();
    auto* command = app.add_subcommand(
        "reserve", "Own project names before their first upload, so no upstream index ever serves them (PEP 752's "
                   "idea): names or globs, as 'acme-*' and 'acme'");
    add_data_option(*command, options->data);
    command->add_option("patterns", options->patterns, "Names or globs, normalised as PEP 503 normalises names");
    command->add_option("--reason", options->reason, "Why, for the list and the audit log");
    command->add_flag("--list", options->list, "List the reservations");
    command->add_option("--release", options->release, "Remove this reservation");
    command->footer("A running server takes the change within a second; names with files here are owned anyway.");
    command->callback([options] { set_exit_status(reserve(*options)); });
}

void add_upstream_prune_command(CLI::App& app) {
    auto options = std::make_shared<prune_options>();
    auto* command = app.add_subcommand(
        "upstream-prune", "Drop the upstream files and pages this index keeps (fetched again when asked for)");
    add_data_option(*command, options->data);
    command->add_option("--older-than", options->older_than, "Only those kept longer than this, as 30d, 12h");
    command->add_option("--project", options->project, "Only this project's");
    command->callback([options] { set_exit_status(prune(*options)); });
}

}  // namespace wheelhouse::cli
