#pragma once
// The --data option every command that touches DATA shares: flag, then WHEELHOUSE_DATA, then
// ./var. One place, so the lead's configuration work can replace it in one edit.

#include <CLI/App.hpp>

#include <string>

namespace wheelhouse::cli {

void add_data_option(CLI::App& command, std::string& data_dir);

}  // namespace wheelhouse::cli
