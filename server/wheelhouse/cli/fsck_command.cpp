#include "wheelhouse/cli/fsck_command.hpp"

#include <CLI/Option.hpp>

#include <cstdio>
#include <memory>

#include "wheelhouse/cli/commands.hpp"
#include "wheelhouse/cli/data_option.hpp"
#include "wheelhouse/cli/existing_data.hpp"
#include "wheelhouse/cli/s3_options.hpp"
#include "wheelhouse/fsck/checker.hpp"

namespace wheelhouse::cli {

int run_fsck(const fsck_command_options& options) {
    auto bucket = bucket_of(options.settings);
    if (!bucket) {
        std::fprintf(stderr, "wheelhouse fsck: cannot use the bucket: %s\n", bucket.error().message.c_str());
        return 2;
    }
    auto data = open_existing_data(options.data_dir, *bucket);
    if (!data) {
        std::fprintf(stderr, "wheelhouse fsck: %s\n", data.error().message.c_str());
        return 2;
    }
    fsck::fsck_options settings;
    settings.fix = options.fix;
    settings.delete_missing_rows = options.delete_missing_rows;
    settings.hash_blobs = !options.quick;
    auto checked = fsck::check(*data->catalog, *data->store, settings);
    if (!checked) {
        std::fprintf(stderr, "wheelhouse fsck: %s\n", checked.error().message.c_str());
        return 2;
    }
    const auto& report = *checked;
    for (const auto& found : report.problems) {
        const std::string kind(fsck::to_string(found.kind));
        std::printf("%s %s%s%s: %s\n  %s\n  %s: %s\n", found.fixed ? "fixed  " : "PROBLEM", kind.c_str(),
                    found.filename.empty() ? "" : " of ", found.filename.c_str(), found.detail.c_str(),
                    found.path.c_str(), found.fixed ? "done" : "to do", found.action.c_str());
    }
    std::printf("wheelhouse fsck: %zu file rows, %zu blobs, %zu METADATA files in %s%s\n", report.rows, report.blobs,
                report.metadata_files, options.data_dir.c_str(), options.quick ? " (sizes only, not hashed)" : "");
    if (*bucket) {
        std::printf("  bucket    %zu objects in %s, sizes and recorded sha256 compared%s\n", report.bucket_objects,
                    (*bucket)->describe().c_str(), options.quick ? " (sizes only)" : "");
    }
    const std::size_t left = report.unfixed();
    std::printf("  problems  %zu found, %zu fixed, %zu left\n", report.problems.size(), report.problems.size() - left, left);
    if (left > 0 && !options.fix) std::printf("  run with --fix to repair what can be repaired (see --help)\n");
    std::fflush(stdout);
    return left > 0 ? 1 : 0;
}

void add_fsck_command(CLI::App& app) {
    auto options = std::make_shared<fsck_command_options>();
    CLI::App* command = app.add_subcommand(
        "fsck", "Check that the blob store and the catalog agree: missing, orphan and corrupt blobs and METADATA");
    add_settings_options(*command, config::option_set::bucket, [options](config::settings resolved) {
        options->data_dir = resolved.data.string();
        options->settings = std::move(resolved);
    });
    command->add_flag("--fix", options->fix,
                      "remove orphans, move corrupt files to DATA/quarantine/, write missing or corrupt METADATA "
                      "again from the wheel");
    command->add_flag("--delete-missing-rows", options->delete_missing_rows,
                      "with --fix: also delete the catalog rows whose wheel is missing (they are otherwise kept, "
                      "so the bytes can be put back from a backup)")
        ->needs("--fix");
    command->add_flag("--quick", options->quick, "compare blob sizes with the catalog instead of hashing every blob");
    command->footer("Safe while the server runs. Exit status: 0 no problem left; 1 problems left (listed); 2 the "
                    "check could not run.");
    command->callback([options] { set_exit_status(run_fsck(*options)); });
}

}  // namespace wheelhouse::cli
