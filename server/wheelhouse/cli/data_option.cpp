#include "wheelhouse/cli/data_option.hpp"

#include <memory>

#include <CLI/Error.hpp>

namespace wheelhouse::cli {

void add_settings_options(CLI::App& command, config::option_set options, std::function<void(config::settings)> use) {
    auto values = std::make_shared<config::overrides>();
    config::add_options(command, *values, options);
    command.parse_complete_callback([values, use = std::move(use)] {
        auto resolved = config::resolve(*values);
        if (!resolved) throw CLI::ValidationError(resolved.error().message);
        use(std::move(resolved).value());
    });
}

void add_data_option(CLI::App& command, std::string& data_dir) {
    add_settings_options(command, config::option_set::data,
                         [&data_dir](const config::settings& resolved) { data_dir = resolved.data.string(); });
}

}  // namespace wheelhouse::cli
