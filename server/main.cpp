// wheelhouse: one binary, one subcommand per job. Each command lives in wheelhouse/cli/.

#include <CLI/CLI.hpp>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include "wheelhouse/cli/commands.hpp"

int main(int argc, char** argv) {
    // Diagnostics to stderr, so `serve 2>err.log` keeps a failed start's reason and a command's
    // stdout holds only its output (and the access log, when it is "-").
    spdlog::set_default_logger(spdlog::stderr_color_mt("wheelhouse"));
    CLI::App app{"wheelhouse: a self-hosted Python package index for binary wheels"};
    app.set_version_flag("--version", WHEELHOUSE_VERSION);
    app.require_subcommand(1);
    app.footer(R"(Typical use:
  wheelhouse serve --data /srv/wheelhouse           serve pip, uv and twine on 127.0.0.1:8080
  wheelhouse ingest --data /srv/wheelhouse dist/    add wheel files already on disk
  wheelhouse inspect dist/*.whl                     check wheel filenames before uploading
  wheelhouse token create --name ci --scope upload  a token for twine upload -u __token__ -p TOKEN
  wheelhouse backup --data /srv/wheelhouse --blobs /backups/today   a consistent copy, even while serving
  wheelhouse fsck --data /srv/wheelhouse            rows without blobs, blobs without rows, bad hashes
  wheelhouse export --data /srv/wheelhouse --out site/ --base-url https://wheels.example.org/
  pip install flash-attn --extra-index-url http://127.0.0.1:8080/simple/

'wheelhouse COMMAND --help' explains each command.)");
    wheelhouse::cli::add_commands(app);
    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& failure) {
        // CLI11 prints the message (or the help); a usage error exits 2, as shells expect.
        return app.exit(failure) == 0 ? 0 : 2;
    }
    spdlog::shutdown();  // flushes and drops the diagnostic loggers before static destruction
    return wheelhouse::cli::exit_status();
}
