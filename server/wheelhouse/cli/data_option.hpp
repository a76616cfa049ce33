#pragma once
// --data and --config for every command that touches DATA, resolved exactly as `serve`
// resolves them (flag > WHEELHOUSE_DATA > the config file's `data` > ./var), so an admin's
// `wheelhouse token create --config /etc/wheelhouse/wheelhouse.toml` finds the server's data.

#include <CLI/App.hpp>

#include <string>

namespace wheelhouse::cli {

// Registers the options on `command`; `data_dir` holds the answer once the command is parsed
// (before its callback runs). A bad config file is a usage error naming the file and key.
void add_data_option(CLI::App& command, std::string& data_dir);

}  // namespace wheelhouse::cli
