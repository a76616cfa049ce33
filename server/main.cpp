// wheelhouse: one binary, one subcommand per job. Each command lives in wheelhouse/cli/.

#include <CLI/CLI.hpp>

#include "wheelhouse/cli/commands.hpp"

int main(int argc, char** argv) {
    CLI::App app{"wheelhouse: a self-hosted Python package index for binary wheels"};
    app.set_version_flag("--version", WHEELHOUSE_VERSION);
    app.require_subcommand(1);
    wheelhouse::cli::add_commands(app);
    CLI11_PARSE(app, argc, argv);
    return wheelhouse::cli::exit_status();
}
