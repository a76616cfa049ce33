#pragma once
// `wheelhouse export [--data DIR] --out DIR --base-url URL [--variant SELECTOR]...`: the index as
// static files (static_export::export_site). Exit status: 0 done; 1 nothing written (the reason
// on stderr).

#include <CLI/App.hpp>

#include <string>
#include <vector>

#include "wheelhouse/config/settings.hpp"

namespace wheelhouse::cli {

struct export_command_options {
    std::string data_dir;
    config::settings settings;  // the bucket's (--s3-*), when the index's files are in one
    std::string out;
    std::string base_url;
    std::vector<std::string> variants;
};

void add_export_command(CLI::App& app);

int run_export(const export_command_options& options);

}  // namespace wheelhouse::cli
