#pragma once
// `wheelhouse backup [--data DIR] [--blobs] OUT`: a consistent copy of the catalog (and with
// --blobs every blob and METADATA its rows use) in the new folder OUT, while the server runs.
// `wheelhouse restore [--data DIR] BACKUP`: a new data folder from a backup, checked file by file.
// Exit status: 0 done; 1 nothing written (the reason on stderr); 3 (backup) written, but the
// data folder lacked files it should hold (listed on stderr: run `wheelhouse fsck`).

#include <CLI/App.hpp>

#include <string>

#include "wheelhouse/config/settings.hpp"

namespace wheelhouse::cli {

struct backup_command_options {
    std::string data_dir;
    config::settings settings;  // the bucket's (--s3-*), when the index's files are in one
    std::string out;
    bool include_blobs = false;
};

struct restore_command_options {
    std::string data_dir;
    std::string backup;
};

void add_backup_command(CLI::App& app);
void add_restore_command(CLI::App& app);

int run_backup(const backup_command_options& options);
int run_restore(const restore_command_options& options);

}  // namespace wheelhouse::cli
