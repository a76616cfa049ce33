#pragma once
// `wheelhouse register URL...` and `wheelhouse import-release OWNER/REPO TAG`: release assets
// registered into DATA directly, as `wheelhouse ingest` adds local files, through the remote
// settings (GitHub API URL and token, CA bundle, allow-list) of --config, flags and environment.

#include <CLI/App.hpp>

namespace wheelhouse::cli {

void add_register_command(CLI::App& app);
void add_import_release_command(CLI::App& app);

}  // namespace wheelhouse::cli
