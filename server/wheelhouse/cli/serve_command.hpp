#pragma once

#include <CLI/App.hpp>

namespace wheelhouse::cli {

// `wheelhouse serve`: the index over HTTP until SIGTERM or SIGINT, then a graceful drain.
void add_serve_command(CLI::App& app);

}  // namespace wheelhouse::cli
