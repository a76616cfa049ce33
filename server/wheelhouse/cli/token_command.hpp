#pragma once

#include <CLI/App.hpp>

namespace wheelhouse::cli {

// `wheelhouse token create | list | revoke`: API tokens for uploads, admin work and private reads.
void add_token_command(CLI::App& app);

}  // namespace wheelhouse::cli
