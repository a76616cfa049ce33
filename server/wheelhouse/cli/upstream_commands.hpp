#pragma once
// The commands of upstream indexes (issue 26):
//   wheelhouse reserve [--data DIR] [--reason TEXT] PATTERN...   own names before their first upload
//   wheelhouse reserve [--data DIR] --list | --release PATTERN
//   wheelhouse upstream-prune [--data DIR] [--older-than 30d] [--project NAME]
// Both are safe beside a running server, which takes a reservation within a second.

#include <CLI/App.hpp>

namespace wheelhouse::cli {

void add_reserve_command(CLI::App& app);
void add_upstream_prune_command(CLI::App& app);

}  // namespace wheelhouse::cli
