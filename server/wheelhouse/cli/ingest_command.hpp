#pragma once
// `wheelhouse ingest [--data DIR] [--jobs N] PATH...`: adds wheel files, or every *.whl under
// directory trees, to the catalog and blob store, on a pool of worker threads. Prints progress
// on a terminal and a summary at the end; exits 1 when any file was rejected, 2 when the data
// directory cannot be opened. Re-running on the same files changes nothing.

#include <CLI/App.hpp>

#include <cstddef>
#include <filesystem>
#include <string>
#include <vector>

#include "wheelhouse/config/settings.hpp"

namespace wheelhouse::cli {

struct ingest_command_options {
    std::string data_dir;
    std::size_t jobs = 0;  // 0: one per core
    bool verbose = false;  // a line per file, not only per rejection
    std::vector<std::string> paths;
    config::settings settings;  // the bucket's (--s3-*), when the index's files are in one
};

void add_ingest_command(CLI::App& app);

// The command itself, for tests: returns the exit status.
int run_ingest(const ingest_command_options& options);

}  // namespace wheelhouse::cli
