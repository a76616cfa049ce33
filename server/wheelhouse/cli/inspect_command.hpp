#pragma once
// `wheelhouse inspect [--pretty] [--members] NAME...`: what wheelhouse reads from wheel filenames
// (name, version, build tag, tags, variant), one JSON object a line, without opening any file;
// with --members, each NAME is an sdist read as an upload is, and its members are listed as the
// checks saw them. '-' reads names from standard input, one a line. Exits 1 when any name (or
// sdist) was refused, 2 on a usage error, 0 otherwise.

#include <CLI/App.hpp>

#include <iosfwd>
#include <string>
#include <vector>

namespace wheelhouse::cli {

struct inspect_command_options {
    bool pretty = false;             // indented JSON for people, not one object a line
    bool members = false;            // read each NAME as an sdist and list its members
    std::vector<std::string> names;  // filenames or paths; "-" for standard input
};

void add_inspect_command(CLI::App& app);

// The command itself, for tests: reports go to `output`, usage errors to `errors`; returns the
// exit status.
int run_inspect(const inspect_command_options& options, std::istream& input, std::ostream& output,
                std::ostream& errors);

}  // namespace wheelhouse::cli
