#pragma once
// --config and the settings a command takes, resolved exactly as `serve` resolves them
// (flag > WHEELHOUSE_* > the config file's key > default), so an admin's
// `wheelhouse token create --config /etc/wheelhouse/wheelhouse.toml` finds the server's data.

#include <CLI/App.hpp>

#include <functional>
#include <string>

#include "wheelhouse/config/settings.hpp"

namespace wheelhouse::cli {

// Registers the options of `options` on `command` and hands the resolved settings to `use`
// once the command is parsed (before its callback runs). A bad value or config file is a usage
// error naming the flag, or the file and key.
void add_settings_options(CLI::App& command, config::option_set options, std::function<void(config::settings)> use);

// --data and --config alone; `data_dir` holds the answer once the command is parsed.
void add_data_option(CLI::App& command, std::string& data_dir);

}  // namespace wheelhouse::cli
