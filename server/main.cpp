// wheelhouse: one binary, one subcommand per job. Each command lives in wheelhouse/cli/.

#include <CLI/CLI.hpp>
#include <spdlog/spdlog.h>

#include "wheelhouse/cli/commands.hpp"

int main(int argc, char** argv) {
    CLI::App app{"wheelhouse: a self-hosted Python package index for binary wheels"};
    app.set_version_flag("--version", WHEELHOUSE_VERSION);
    app.require_subcommand(1);
    wheelhouse::cli::add_commands(app);
    CLI11_PARSE(app, argc, argv);
    spdlog::shutdown();  // drains the asynchronous access log before the process ends
    return wheelhouse::cli::exit_status();
}
