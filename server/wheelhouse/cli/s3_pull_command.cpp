#include "wheelhouse/cli/s3_pull_command.hpp"

#include <cstdio>
#include <map>
#include <optional>

#include "wheelhouse/catalog/row_columns.hpp"
#include "wheelhouse/cli/commands.hpp"
#include "wheelhouse/cli/data_option.hpp"
#include "wheelhouse/cli/existing_data.hpp"
#include "wheelhouse/cli/s3_options.hpp"
#include "wheelhouse/error_text.hpp"
#include "wheelhouse/sqlite/columns.hpp"
#include "wheelhouse/storage/file_copy.hpp"

namespace wheelhouse::cli {
namespace {

struct s3_pull_options {
    std::string data;
    config::settings settings;
    bool leave_bucket = false;
};

struct pull_counts {
    std::size_t copied = 0;
    std::uint64_t bytes = 0;
    std::size_t present = 0;
    std::size_t lacking = 0;  // missing from the bucket, or not the row's bytes there
};

int fail(const error& failure) {
    std::fprintf(stderr, "wheelhouse s3-pull: %s\n", describe(failure).c_str());
    return 2;
}

constexpr auto owned_columns = sqlite::pick(catalog::file_columns, {"sha256", "download_mode", "size"});

// The sha256 and size of every file the index holds itself, from one snapshot of the catalog.
result<std::map<std::string, std::uint64_t>> owned_files(const catalog::catalog& catalog) {
    std::map<std::string, std::uint64_t> owned;
    auto read = catalog.read_snapshot([&](sqlite::connection& db) -> result<void> {
        auto query = db.prepare("SELECT " + sqlite::column_list(owned_columns) + " FROM blob_rows");
        if (!query) return query.error();
        for (;;) {
            auto row = query->step();
            if (!row) return row.error();
            if (!*row) return {};
            catalog::file_record file;
            sqlite::read_columns(*query, 0, owned_columns, file);
            if (file.mode == catalog::download_mode::local) owned.emplace(std::move(file.sha256), file.size);
        }
    });
    if (!read) return read.error();
    return owned;
}

// Whether blobs/ holds the row's bytes. A file of other bytes there (from before the bucket, or
// damaged since) is moved to DATA/quarantine/ for a person to look at, so the bucket's checked
// copy can take its place.
result<bool> home_already(const storage::blob_store& folder, const std::string& sha256, std::uint64_t size) {
    if (!folder.has_blob(sha256)) return false;
    auto there = storage::hash_file(folder.blob_path(sha256));
    if (!there && there.error().kind == error_kind::not_found) return false;
    if (!there) return there.error();
    if (there->sha256 == sha256 && there->size == size) return true;
    auto moved = folder.quarantine(folder.blob_path(sha256));
    if (!moved) return moved.error();
    std::fprintf(stderr, "wheelhouse s3-pull: %s held other bytes; moved to %s\n", folder.blob_path(sha256).c_str(),
                 moved->c_str());
    return false;
}

// One file: skipped when blobs/ has its bytes, else copied out of the bucket next to a locked
// spool file of ours (so a crash leaves only what the next start's sweep removes), checked, and
// linked into place.
result<void> pull_one(const storage::blob_store& folder, storage::object_store& bucket, const std::string& sha256,
                      std::uint64_t size, pull_counts& counts) {
    auto home = home_already(folder, sha256, size);
    if (!home) return home.error();
    if (*home) return (++counts.present, result<void>{});
    auto spool = folder.create_spool();
    if (!spool) return spool.error();
    auto target = spool->path();
    target += ".pull";
    auto copied = bucket.copy_out(sha256, size, target, 0444);
    const auto lacking = [&](const std::string& why) {
        std::error_code ignored;
        std::filesystem::remove(target, ignored);
        ++counts.lacking;
        std::fprintf(stderr, "wheelhouse s3-pull: %s %s: run wheelhouse fsck with the bucket's settings\n",
                     sha256.c_str(), why.c_str());
        return result<void>{};
    };
    if (!copied && copied.error().kind == error_kind::not_found) return lacking("is missing from the bucket");
    if (!copied && copied.error().kind == error_kind::conflict)
        return lacking("is other bytes in the bucket (" + copied.error().message + ")");
    if (!copied) return copied.error();
    if (copied->sha256 != sha256 || copied->size != size)
        return lacking("is other bytes in the bucket (" + std::to_string(copied->size) + " bytes, sha256 " +
                       copied->sha256 + ")");
    auto placed = folder.put_blob(sha256, target, storage::durability::at_sync);
    std::error_code ignored;
    std::filesystem::remove(target, ignored);
    if (!placed) return placed.error();
    if (*placed == storage::put_outcome::already_present) {  // put there meanwhile: by whom, with what?
        auto now_home = home_already(folder, sha256, size);
        if (!now_home) return now_home.error();
        if (!*now_home) return lacking("was put in blobs/ as other bytes while it was copied");
        return (++counts.present, result<void>{});
    }
    ++counts.copied;
    counts.bytes += size;
    return {};
}

int pull(const s3_pull_options& options) {
    auto bucket = bucket_of(options.settings);
    if (!bucket) return fail(bucket.error());
    if (!*bucket) return fail(invalid("give --s3-endpoint, --s3-bucket and --s3-prefix: the bucket to copy from"));
    std::optional<storage::bucket_departure> departure;
    if (options.leave_bucket) {
        auto begun = storage::bucket_departure::begin(options.data, (*bucket)->describe());
        if (!begun) return fail(begun.error());
        departure.emplace(std::move(*begun));
    } else if (auto recorded = storage::recorded_bucket(options.data); !recorded) {
        return fail(recorded.error());
    } else if (*recorded != (*bucket)->describe()) {
        return fail(invalid(recorded->empty() ? "this data folder's files are under its blobs/ already"
                                              : "give the s3-* settings of " + *recorded + ", not " +
                                                    (*bucket)->describe()));
    }
    // The folder alone: its blobs/ and tmp/, the bucket's files left to `bucket`.
    auto data = open_existing_data(options.data, nullptr, storage::owned_bytes::untouched);
    if (!data) return fail(data.error());
    auto owned = owned_files(*data->catalog);
    if (!owned) return fail(owned.error());
    pull_counts counts;
    for (const auto& [sha256, size] : *owned) {
        if (auto pulled = pull_one(*data->store, **bucket, sha256, size, counts); !pulled) return fail(pulled.error());
    }
    if (auto synced = data->store->sync(); !synced) return fail(synced.error());
    std::printf("copied %zu files (%llu bytes) from bucket '%s'; %zu were in the folder already; %zu lacking\n",
                counts.copied, static_cast<unsigned long long>(counts.bytes), options.settings.s3_bucket.c_str(),
                counts.present, counts.lacking);
    if (counts.lacking > 0) return 1;
    if (departure) {
        if (auto left = departure->finish(); !left) return fail(left.error());
        std::printf("every file is in %s/blobs/: start the server without the s3-* settings\n", options.data.c_str());
    }
    return 0;
}

}  // namespace

void add_s3_pull_command(CLI::App& app) {
    auto options = std::make_shared<s3_pull_options>();
    auto* command = app.add_subcommand("s3-pull", "Copy the files the index keeps in its bucket back into DATA/blobs/ "
                                                  "(checked by sha256, resumable, safe beside a running server)");
    add_settings_options(*command, config::option_set::bucket, [options](config::settings resolved) {
        options->data = resolved.data.string();
        options->settings = std::move(resolved);
    });
    command->add_flag("--leave-bucket", options->leave_bucket,
                      "with the server stopped: copy what is left, then remove DATA/bucket so the folder serves "
                      "without the bucket (refused while any process uses it)");
    command->footer("Exit status: 0 done; 1 files the bucket lacks or holds corrupt (listed; the folder keeps its "
                    "bucket); 2 could not run.");
    command->callback([options] { set_exit_status(pull(*options)); });
}

}  // namespace wheelhouse::cli
