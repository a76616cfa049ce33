#pragma once
// The subcommands of the `wheelhouse` binary. Each add_*_command registers its options and a
// callback; the callback records the process exit status here.

#include <CLI/App.hpp>

namespace wheelhouse::cli {

void add_commands(CLI::App& app);

// Set by whichever command ran.
int exit_status() noexcept;
void set_exit_status(int status) noexcept;

}  // namespace wheelhouse::cli
