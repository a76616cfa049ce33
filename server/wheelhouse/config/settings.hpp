#pragma once
// The server's configuration: flags > WHEELHOUSE_* environment > TOML file > defaults.

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

#include <CLI/App.hpp>

#include "wheelhouse/result.hpp"

namespace wheelhouse::config {

struct settings {
    std::string listen = "127.0.0.1:8080";
    std::filesystem::path data = "./var";
    unsigned threads = 0;  // 0: one per core
    std::string access_log = "-";
    std::chrono::seconds page_max_age{60};
    std::uint64_t max_upload_bytes = 4ull << 30;
    std::chrono::seconds idle_timeout{30};
    std::chrono::seconds read_timeout{30};
    std::chrono::seconds drain_timeout{10};
    unsigned ingest_workers = 0;  // 0: one per core
    unsigned ingest_queue = 16;
    bool private_index = false;  // reads (/simple/, /files/, /api/) need a token too
};

// Values given on the command line or in the environment; unset ones fall through to the
// file and then the defaults.
struct overrides {
    std::optional<std::string> config_file;
    std::optional<std::string> listen;
    std::optional<std::string> data;
    std::optional<unsigned> threads;
    std::optional<std::string> access_log;
    std::optional<unsigned> page_max_age;
    std::optional<std::uint64_t> max_upload_bytes;
    std::optional<unsigned> idle_timeout;
    std::optional<unsigned> read_timeout;
    std::optional<unsigned> drain_timeout;
    std::optional<unsigned> ingest_workers;
    std::optional<unsigned> ingest_queue;
    std::optional<bool> private_index;  // --private, or WHEELHOUSE_PRIVATE=1/0 (0 overrides the file)
};

// Registers --config, --data (WHEELHOUSE_DATA) and, with `server_options`, every server option.
void add_options(CLI::App& command, overrides& values, bool server_options);

// Defaults, then the TOML file, then the overrides. The error names the file, key and problem.
result<settings> resolve(const overrides& values);

// "127.0.0.1:8080", "[::1]:0", ":8080" (all addresses) -> host and port.
result<std::pair<std::string, unsigned short>> split_listen_address(const std::string& listen);

}  // namespace wheelhouse::config
