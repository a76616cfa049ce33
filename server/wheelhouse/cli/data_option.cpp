#include "wheelhouse/cli/data_option.hpp"

#include <memory>

#include <CLI/Error.hpp>

#include "wheelhouse/config/settings.hpp"

namespace wheelhouse::cli {

void add_data_option(CLI::App& command, std::string& data_dir) {
    auto values = std::make_shared<config::overrides>();
    config::add_options(command, *values, false);
    command.parse_complete_callback([values, &data_dir] {
        auto resolved = config::resolve(*values);
        if (!resolved) throw CLI::ValidationError("--config", resolved.error().message);
        data_dir = resolved->data.string();
    });
}

}  // namespace wheelhouse::cli
