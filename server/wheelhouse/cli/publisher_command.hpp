#pragma once

#include <CLI/App.hpp>

namespace wheelhouse::cli {

// `wheelhouse publisher add | list | remove`: the CI workflows (trusted publishers) that may trade
// an identity token for a short-lived upload token to a project.
void add_publisher_command(CLI::App& app);

}  // namespace wheelhouse::cli
