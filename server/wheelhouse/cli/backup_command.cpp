#include "wheelhouse/cli/backup_command.hpp"

#include <CLI/Option.hpp>

#include <cstdio>
#include <memory>

#include "wheelhouse/backup/backup_folder.hpp"
#include "wheelhouse/cli/s3_options.hpp"
#include "wheelhouse/cli/commands.hpp"
#include "wheelhouse/cli/data_option.hpp"

namespace wheelhouse::cli {
namespace {

std::string megabytes(std::uint64_t bytes) {
    char text[32];
    std::snprintf(text, sizeof text, "%.1f MB", static_cast<double>(bytes) / 1e6);
    return text;
}

}  // namespace

int run_backup(const backup_command_options& options) {
    backup::backup_options settings;
    settings.include_blobs = options.include_blobs;
    auto bucket = bucket_of(options.settings);
    if (!bucket) {
        std::fprintf(stderr, "wheelhouse backup: cannot use the bucket: %s\nwheelhouse backup: no backup was written\n",
                     bucket.error().message.c_str());
        return 1;
    }
    settings.bucket = bucket->get();
    auto made = backup::create_backup(options.data_dir, options.out, settings);
    if (!made) {
        std::fprintf(stderr, "wheelhouse backup: %s\nwheelhouse backup: no backup was written\n",
                     made.error().message.c_str());
        return 1;
    }
    std::printf("wheelhouse backup: %s\n", made->location.c_str());
    std::printf("  catalog   %lld file rows, schema version %lld, %lld pages in %d steps (%d restarted by writes)\n",
                static_cast<long long>(made->file_rows), static_cast<long long>(made->database.schema_version),
                static_cast<long long>(made->database.pages), made->database.steps, made->database.restarts);
    if (options.include_blobs) {
        std::printf("  blobs     %zu wheels, %zu METADATA files\n", made->blobs, made->metadata_files);
    } else if (made->metadata_files > 0) {
        std::printf("  blobs     %zu METADATA files; the wheels stay in the bucket (--blobs copies them too)\n",
                    made->metadata_files);
    } else {
        std::printf("  blobs     not included (--blobs adds them)\n");
    }
    std::printf("  size      %s\n", megabytes(made->bytes).c_str());
    std::fflush(stdout);
    if (!made->warnings.empty()) {
        for (const auto& warning : made->warnings) std::fprintf(stderr, "wheelhouse backup: warning: %s\n", warning.c_str());
        std::fprintf(stderr,
                     "wheelhouse backup: the backup is complete for everything else, but the data folder lacks what "
                     "is listed above; run `wheelhouse fsck`%s\n",
                     settings.bucket ? " with the same --s3-* settings" : "");
        return 3;
    }
    return 0;
}

int run_restore(const restore_command_options& options) {
    auto restored = backup::restore_backup(options.backup, options.data_dir);
    if (!restored) {
        std::fprintf(stderr, "wheelhouse restore: %s\nwheelhouse restore: nothing was restored\n",
                     restored.error().message.c_str());
        return 1;
    }
    const auto& contents = restored->contents;
    std::printf("wheelhouse restore: %s from the backup of %s\n", restored->location.c_str(), contents.created.c_str());
    std::printf("  catalog   %lld file rows, schema version %lld\n", static_cast<long long>(contents.file_rows),
                static_cast<long long>(contents.schema_version));
    std::printf("  blobs     %zu files, every one checked against the manifest\n", contents.blobs.size());
    if (!contents.includes_blobs && !contents.blobs.empty()) {
        std::printf("  note      this backup holds the catalog and METADATA of an index whose wheels are in a bucket: "
                    "start it with that bucket's --s3-* settings, then run `wheelhouse fsck --data %s` with them\n",
                    restored->location.c_str());
    } else if (!contents.includes_blobs) {
        std::printf("  note      this backup holds the catalog only: copy blobs/ from the old data folder into %s, "
                    "then run `wheelhouse fsck --data %s`\n",
                    restored->location.c_str(), restored->location.c_str());
    }
    std::fflush(stdout);
    return 0;
}

void add_backup_command(CLI::App& app) {
    auto options = std::make_shared<backup_command_options>();
    CLI::App* command = app.add_subcommand(
        "backup", "Copy the catalog (and with --blobs the wheels) into a new folder, while the server runs");
    add_settings_options(*command, config::option_set::bucket, [options](config::settings resolved) {
        options->data_dir = resolved.data.string();
        options->settings = std::move(resolved);
    });
    command->add_flag("--blobs", options->include_blobs,
                      "also copy every wheel and METADATA the catalog's rows use, each checked against its sha256 "
                      "(from the bucket, with --s3-*, for an index whose files are in one)");
    command->add_option("out", options->out, "the backup folder to create (must not exist, or be empty)")->required();
    command->footer(
        "The backup is a folder: catalog.db (SQLite online backup, integrity-checked), blobs/ with --blobs, and "
        "manifest.json with the sha256 of every file, written last. It is built under a temporary name and renamed "
        "when complete.\nExit status: 0 done; 1 nothing written (the reason is printed); 3 written, but the data "
        "folder lacked blobs its rows need (listed: run `wheelhouse fsck`).");
    command->callback([options] { set_exit_status(run_backup(*options)); });
}

void add_restore_command(CLI::App& app) {
    auto options = std::make_shared<restore_command_options>();
    CLI::App* command = app.add_subcommand("restore", "Make a new data folder from a backup folder");
    add_data_option(*command, options->data_dir);
    command->add_option("backup", options->backup, "the folder `wheelhouse backup` wrote")->required();
    command->footer(
        "--data names the data folder to create: it must not exist, or be empty (a restore never overwrites a "
        "catalog). Every file is checked against the backup's manifest and the catalog by PRAGMA integrity_check "
        "before the folder is renamed into place.\nExit status: 0 done; 1 nothing restored (the reason is printed).");
    command->callback([options] { set_exit_status(run_restore(*options)); });
}

}  // namespace wheelhouse::cli
