#include "wheelhouse/cli/data_option.hpp"

#include <CLI/Option.hpp>

namespace wheelhouse::cli {

void add_data_option(CLI::App& command, std::string& data_dir) {
    data_dir = "./var";
    command.add_option("--data", data_dir, "data directory: catalog.db, blobs/, tmp/")
        ->envname("WHEELHOUSE_DATA")
        ->capture_default_str();
}

}  // namespace wheelhouse::cli
