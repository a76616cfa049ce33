#pragma once
// `wheelhouse fsck [--data DIR] [--fix] [--delete-missing-rows] [--quick]`: checks that the blob
// store agrees with the catalog (fsck::check) and, with --fix, repairs what can be repaired.
// Exit status: 0 no problem left; 1 problems left (listed); 2 the check could not run.

#include <CLI/App.hpp>

#include <string>

#include "wheelhouse/config/settings.hpp"

namespace wheelhouse::cli {

struct fsck_command_options {
    std::string data_dir;
    config::settings settings;  // the bucket's (--s3-*), when the index's files are in one
    bool fix = false;
    bool delete_missing_rows = false;
    bool quick = false;
};

void add_fsck_command(CLI::App& app);

int run_fsck(const fsck_command_options& options);

}  // namespace wheelhouse::cli
