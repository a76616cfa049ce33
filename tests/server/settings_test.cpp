// The settings table read through CLI11 as `serve` reads it: each kind of value from its flag,
// its WHEELHOUSE_* variable and its file key, in that precedence, and a bad value named where
// it came from. (tests/e2e/test_configuration.py shows the same on the real binary.)

#include <catch2/catch.hpp>

#include <cstdlib>
#include <functional>
#include <regex>

#include <CLI/CLI.hpp>

#include "test_support.hpp"
#include "wheelhouse/config/settings.hpp"

using namespace wheelhouse;
using wheelhouse::testing::temp_dir;

namespace {

using variables = std::vector<std::pair<std::string, std::string>>;

// Sets variables for one parse and puts back what was there before.
class scoped_environment {
public:
    explicit scoped_environment(const variables& values) {
        for (const auto& [name, value] : values) {
            const char* before = std::getenv(name.c_str());
            saved_.emplace_back(name, before ? std::optional<std::string>(before) : std::nullopt);
            ::setenv(name.c_str(), value.c_str(), 1);
        }
    }
    scoped_environment(const scoped_environment&) = delete;
    scoped_environment& operator=(const scoped_environment&) = delete;
    ~scoped_environment() {
        for (const auto& [name, before] : saved_) {
            if (before) ::setenv(name.c_str(), before->c_str(), 1);
            else ::unsetenv(name.c_str());
        }
    }

private:
    std::vector<std::pair<std::string, std::optional<std::string>>> saved_;
};

// A command taking `options`, given `arguments` and `environment`, resolved.
result<config::settings> resolve(std::vector<std::string> arguments, const variables& environment = {},
                                 config::option_set options = config::option_set::serving) {
    CLI::App command("settings test");
    config::overrides values;
    config::add_options(command, values, options);
    const scoped_environment set(environment);
    arguments.insert(arguments.begin(), "wheelhouse");
    std::vector<char*> argv;
    for (auto& argument : arguments) argv.push_back(argument.data());
    command.parse(static_cast<int>(argv.size()), argv.data());
    return config::resolve(values);
}

std::string joined(const std::vector<std::string>& names) {
    std::string out;
    for (const auto& name : names) out += (out.empty() ? "" : ",") + name;
    return out;
}

// One setting of each kind of value, with a value per source; the field shown as text.
struct precedence_case {
    std::string name;
    std::string in_file;  // TOML
    std::string in_environment;
    std::optional<std::string> on_command_line;  // nullopt: the flag alone
    std::function<std::string(const config::settings&)> shown;
    std::string from_default, from_file, from_environment, from_flag;
};

const std::vector<precedence_case>& precedence_cases() {
    static const std::vector<precedence_case> cases = {
        {"listen", "\"127.0.0.1:1\"", "127.0.0.1:2", "127.0.0.1:3", [](const auto& s) { return s.listen; },
         "127.0.0.1:8080", "127.0.0.1:1", "127.0.0.1:2", "127.0.0.1:3"},
        {"data", "\"/from/file\"", "/from/environment", "/from/flag", [](const auto& s) { return s.data.string(); },
         "./var", "/from/file", "/from/environment", "/from/flag"},
        {"ingest-queue", "2", "3", "4", [](const auto& s) { return std::to_string(s.ingest_queue); }, "16", "2", "3",
         "4"},
        {"max-upload-size", "5000000000", "6000000000", "7000000000",
         [](const auto& s) { return std::to_string(s.max_upload_bytes); }, "4294967296", "5000000000", "6000000000",
         "7000000000"},
        {"page-max-age", "1", "2", "3", [](const auto& s) { return std::to_string(s.page_max_age.count()); }, "60", "1",
         "2", "3"},
        {"private", "true", "0", std::nullopt, [](const auto& s) { return std::string(s.private_index ? "on" : "off"); },
         "off", "on", "off", "on"},
        {"remote-allowed-hosts", "[\"A.example\", \"b.example\"]", "c.example", "d.example, E.example",
         [](const auto& s) { return joined(s.remote_allowed_hosts); }, joined(remote::default_allowed_hosts()),
         "a.example,b.example", "c.example", "d.example,e.example"},
        {"remote-download-mode", "\"proxy\"", "cache", "redirect",
         [](const auto& s) { return std::string(catalog::to_string(s.remote_download_mode)); }, "redirect", "proxy",
         "cache", "redirect"},
    };
    return cases;
}

std::string variable_of(const std::string& name) {
    std::string variable = "WHEELHOUSE_" + name;
    for (auto& c : variable) c = c == '-' ? '_' : static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    return variable;
}

std::string shown_or_error(const precedence_case& row, const result<config::settings>& resolved) {
    return resolved ? row.shown(*resolved) : "error: " + resolved.error().message;
}

}  // namespace

TEST_CASE("each kind of setting: flag > WHEELHOUSE_* variable > file key > default") {
    temp_dir dir;
    for (const auto& row : precedence_cases()) {
        INFO(row.name);
        const auto file = dir / (row.name + ".toml");
        wheelhouse::testing::write_file(file, row.name + " = " + row.in_file + "\n");
        const std::vector<std::string> with_file = {"--config", file.string()};
        std::vector<std::string> with_flag = with_file;
        with_flag.push_back("--" + row.name);
        if (row.on_command_line) with_flag.push_back(*row.on_command_line);
        const variables environment = {{variable_of(row.name), row.in_environment}};

        CHECK(shown_or_error(row, resolve({})) == row.from_default);
        CHECK(shown_or_error(row, resolve(with_file)) == row.from_file);
        CHECK(shown_or_error(row, resolve(with_file, environment)) == row.from_environment);
        CHECK(shown_or_error(row, resolve(with_flag, environment)) == row.from_flag);
    }
}

TEST_CASE("a bad value is named by its flag, or by its file and key, with the fix") {
    temp_dir dir;
    const auto file = dir / "wheelhouse.toml";
    auto from_file = [&](const std::string& text) {
        wheelhouse::testing::write_file(file, text);
        auto resolved = resolve({"--config", file.string()});
        REQUIRE_FALSE(resolved);
        return resolved.error().message;
    };
    const std::string in_file = "configuration file " + file.string() + ": ";
    const std::string not_a_mode = "'teleport' is not a download mode; use redirect, proxy or cache";

    CHECK(from_file("remote-download-mode = \"teleport\"\n") == in_file + "key 'remote-download-mode': " + not_a_mode);
    CHECK(resolve({"--remote-download-mode", "teleport"}).error().message == "--remote-download-mode: " + not_a_mode);
    CHECK(resolve({}, {{"WHEELHOUSE_REMOTE_DOWNLOAD_MODE", "teleport"}}).error().message ==
          "--remote-download-mode: " + not_a_mode);

    // A check of the value that won names the source that gave it.
    CHECK(from_file("remote-connect-timeout = 0\n") == in_file + "key 'remote-connect-timeout': must be at least 1 second");
    wheelhouse::testing::write_file(file, "remote-connect-timeout = 5\n");
    CHECK(resolve({"--config", file.string()}, {{"WHEELHOUSE_REMOTE_CONNECT_TIMEOUT", "0"}}).error().message ==
          "--remote-connect-timeout: must be at least 1 second");

    CHECK(from_file("page-max-age = \"60\"\n") == in_file + "'page-max-age' must be a non-negative integer (at most 4294967295)");
    CHECK(from_file("private = \"yes\"\n") == in_file + "'private' must be true or false");
    CHECK(from_file("remote-allowed-hosts = [\"github.com\", 7]\n") ==
          in_file + "'remote-allowed-hosts' must be an array of host names");
    CHECK(from_file("max_upload_size = 1\n") == in_file + "unknown key 'max_upload_size'");
}

TEST_CASE("a count too large for its setting is refused, not truncated") {
    temp_dir dir;
    const auto file = dir / "wheelhouse.toml";
    wheelhouse::testing::write_file(file, "ingest-queue = 4294967312\n");  // 2^32 + 16 would become 16
    auto resolved = resolve({"--config", file.string()});
    REQUIRE_FALSE(resolved);
    CHECK(resolved.error().message == "configuration file " + file.string() +
                                          ": 'ingest-queue' must be a non-negative integer (at most 4294967295)");
}

// fuzz/settings_fuzz: a float was converted to an integer, past 2^63 with undefined behaviour.
TEST_CASE("a float where a count goes is refused, however large") {
    temp_dir dir;
    const auto file = dir / "wheelhouse.toml";
    for (const std::string value : {"4444e46", "16.0", "inf", "nan"}) {
        CAPTURE(value);
        wheelhouse::testing::write_file(file, "ingest-queue = " + value + "\n");
        auto resolved = resolve({"--config", file.string()});
        REQUIRE_FALSE(resolved);
        CHECK(resolved.error().message == "configuration file " + file.string() +
                                              ": 'ingest-queue' must be a non-negative integer (at most 4294967295)");
    }
}

TEST_CASE("a flag's value that is neither on nor off is a usage error, not an exception past main") {
    CHECK_THROWS_AS(resolve({}, {{"WHEELHOUSE_PRIVATE", "maybe"}}), CLI::ValidationError);
    CHECK_THROWS_WITH(resolve({"--remote-allow-private-addresses=maybe"}),
                      Catch::Contains("--remote-allow-private-addresses: 'maybe' is neither on nor off"));
    CHECK_FALSE(resolve({}, {{"WHEELHOUSE_PRIVATE", "no"}})->private_index);
    CHECK(resolve({}, {{"WHEELHOUSE_PRIVATE", "yes"}})->private_index);
}

TEST_CASE("every option in --help names its WHEELHOUSE_* variable") {
    CLI::App command("settings test");
    config::overrides values;
    config::add_options(command, values, config::option_set::serving);
    // "  --page-max-age UINT (Env:WHEELHOUSE_PAGE_MAX_AGE)": each option's line names its variable.
    const std::string help = command.help();
    const std::regex option_line(R"(\n +--([a-z0-9-]+)[^\n]*)");
    std::size_t options = 0;
    for (std::sregex_iterator it(help.begin(), help.end(), option_line), end; it != end; ++it) {
        const std::string line = (*it)[0], name = (*it)[1];
        INFO(line);
        CHECK(line.find("(Env:" + variable_of(name) + ")") != std::string::npos);
        ++options;
    }
    CHECK(options >= 20);
}

TEST_CASE("commands that do not serve take --config and --data, and still refuse a bad file") {
    temp_dir dir;
    const auto file = dir / "wheelhouse.toml";
    wheelhouse::testing::write_file(file, "data = \"/srv/wheels\"\nthreads = 4\n");
    auto resolved = resolve({"--config", file.string()}, {}, config::option_set::data);
    REQUIRE(resolved);
    CHECK(resolved->data == "/srv/wheels");
    CHECK_THROWS_AS(resolve({"--threads", "4"}, {}, config::option_set::data), CLI::ExtrasError);
    CHECK_NOTHROW(resolve({"--remote-read-timeout", "4"}, {}, config::option_set::fetching));
    wheelhouse::testing::write_file(file, "dta = \"/srv/wheels\"\n");
    CHECK(resolve({"--config", file.string()}, {}, config::option_set::data).error().message ==
          "configuration file " + file.string() + ": unknown key 'dta'");
}
