#include "wheelhouse/cli/inspect_command.hpp"

#include <CLI/Option.hpp>

#include <algorithm>
#include <cstddef>
#include <iostream>
#include <memory>
#include <string>
#include <string_view>

#include <boost/json/serialize.hpp>

#include "wheelhouse/cli/commands.hpp"
#include "wheelhouse/error_text.hpp"
#include "wheelhouse/ingest/sdist_validation.hpp"
#include "wheelhouse/inspect/filename_report.hpp"
#include "wheelhouse/pep625/sdist_filename.hpp"
#include "wheelhouse/text/pretty_json.hpp"

namespace wheelhouse::cli {
namespace {

constexpr std::string_view standard_input = "-";

bool is_blank(std::string_view line) noexcept {
    return line.find_first_not_of(" \t\f\v") == std::string_view::npos;
}

boost::json::object member_json(const ingest::sdist_member& member) {
    boost::json::object json;
    json["type"] = ingest::describe(member.type);
    json["path"] = member.path;  // UTF-8: the checks refuse any other name before it is listed
    if (member.type == ingest::tar_entry_type::file) json["size"] = member.size;
    if (!member.link.empty()) json["link"] = member.link;
    if (!member.resolved.empty()) json["resolved"] = member.resolved;
    return json;
}

// --members: the filename's report, then the file read as the index reads an uploaded sdist,
// with "members" (those checked, up to a refusal) and "error" when it would be refused.
inspect::filename_report members_report(std::string_view argument) {
    auto report = inspect::report(argument);
    if (!report.valid) return report;
    auto sdist = pep625::parse_sdist_filename(std::string_view(report.json.at("filename").as_string()));
    if (!sdist) {
        report.valid = false;
        report.json["error"] = "--members reads sdists (name-version.tar.gz); this is a wheel";
        return report;
    }
    boost::json::array members;
    const auto list = [&](const ingest::sdist_member& member) { members.push_back(member_json(member)); };
    auto validated = ingest::validate_sdist(std::string(argument), *sdist, {}, list);
    report.json["members"] = std::move(members);
    if (!validated) {
        report.valid = false;
        report.json["error"] = describe(validated.error());
    }
    return report;
}

class report_writer {
public:
    report_writer(std::ostream& output, bool pretty, bool members)
        : output_(output), pretty_(pretty), members_(members) {}

    void write(std::string_view argument) {
        const auto report = members_ ? members_report(argument) : inspect::report(argument);
        if (!report.valid) ++refused_;
        output_ << (pretty_ ? text::pretty_json(report.json) : boost::json::serialize(report.json)) << '\n';
        // A person typing names at a terminal, or a script reading the pipe, sees each answer at once.
        output_.flush();
    }

    std::size_t refused() const noexcept { return refused_; }

private:
    std::ostream& output_;
    bool pretty_;
    bool members_;
    std::size_t refused_ = 0;
};

constexpr const char* help_footer = R"(Prints, for each NAME, one JSON object on one line with every field wheelhouse reads
from a wheel filename: filename, name, normalized_name, version, normalized_version,
public_version, local, build ({"number", "suffix", "text"} or null), python_tags, abi_tags,
platform_tags and variant (cuda, sm, torch, cxx11abi, rocm, cpu, ...: what the local label
or build tag says about the machine the wheel was built for). An sdist's name (PEP 625,
name-version.tar.gz) prints "packagetype": "sdist" with the name and version fields and an
empty variant; a legacy sdist name is refused with the name to use. The decoding is the one the
index applies on upload, so CI can check a wheel lands in the variant it meant. A refused
name prints {"filename": ..., "error": "..."}. A NAME with '/' is a path: its last part is
checked and the whole is kept in "path". Names that start with '-' follow a '--' written
before the first NAME.

Without --members, files are never opened. With --members, each NAME is an sdist file, read
the way the index reads an upload, and its object gains "members": each member the checks
passed, in archive order, as {"type": "file" | "directory" | "symlink" | "hardlink", "path",
"size" (a file's), "link" (a link's target as written), "resolved" (a link's target from the
archive's root)}; an sdist the index would refuse also has "error", and "members" ends where
the checks stopped. These are exactly the members that Python's tarfile and GNU tar unpack.

Examples:
  wheelhouse inspect dist/*.whl dist/*.tar.gz
  ls dist | wheelhouse inspect -
  wheelhouse inspect --pretty flash_attn-2.8.3+cu128torch2.8-cp312-cp312-linux_x86_64.whl
  wheelhouse inspect dist/*.whl | jq -r '.variant.cuda'
  wheelhouse inspect --members dist/*.tar.gz | jq -r '.members[] | .type + " " + .path'

Exit status: 0 when every name is a valid wheel or sdist filename (with --members: every file
an sdist the index would take), 1 when any was refused, 2 on a usage error.)";

}  // namespace

int run_inspect(const inspect_command_options& options, std::istream& input, std::ostream& output,
                std::ostream& errors) {
    if (std::count(options.names.begin(), options.names.end(), standard_input) > 1) {
        errors << "wheelhouse inspect: '-' (standard input) may be given only once\n";
        return 2;
    }
    report_writer writer(output, options.pretty, options.members);
    for (const auto& name : options.names) {
        if (name != standard_input) {
            writer.write(name);
            continue;
        }
        std::size_t read = 0;
        for (std::string line; std::getline(input, line);) {
            if (line.ends_with('\r')) line.pop_back();  // a list written on Windows
            if (is_blank(line)) continue;
            writer.write(line);
            ++read;
        }
        if (read == 0) errors << "wheelhouse inspect: no names on standard input\n";
    }
    return writer.refused() > 0 ? 1 : 0;
}

void add_inspect_command(CLI::App& app) {
    auto options = std::make_shared<inspect_command_options>();
    CLI::App* command = app.add_subcommand(
        "inspect", "Check wheel filenames: version, tags and CUDA/torch variant as JSON, one a line");
    command->add_flag("--pretty", options->pretty, "indented JSON for reading, instead of one object a line");
    command->add_flag("--members", options->members,
                      "read each NAME as an sdist (.tar.gz), as an upload is read, and list its members");
    command->add_option("NAME", options->names,
                        "wheel filenames or paths; '-' reads names from standard input, one a line")
        ->required();
    command->footer(help_footer);
    command->callback([options] { set_exit_status(run_inspect(*options, std::cin, std::cout, std::cerr)); });
}

}  // namespace wheelhouse::cli
