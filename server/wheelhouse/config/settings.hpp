#pragma once
// The server's configuration: flags > WHEELHOUSE_* environment > TOML file > defaults.

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <CLI/App.hpp>

#include "wheelhouse/catalog/records.hpp"
#include "wheelhouse/remote/host_policy.hpp"
#include "wheelhouse/remote/http_client.hpp"
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

    // Release assets: registering, importing and downloading them.
    std::string github_api_url = "https://api.github.com";  // GitHub Enterprise: https://HOST/api/v3
    std::string github_token;    // lists private repositories' releases and fetches their assets
    std::string ca_bundle;       // PEM file of trusted CAs; empty: the system's store
    std::vector<std::string> remote_allowed_hosts = remote::default_allowed_hosts();
    bool remote_allow_private_addresses = false;  // loopback and private networks: tests only
    catalog::download_mode remote_download_mode = catalog::download_mode::redirect;
    std::chrono::seconds remote_connect_timeout{10};
    std::chrono::seconds remote_read_timeout{30};
    unsigned remote_proxy_downloads = 16;  // proxied downloads at once; more get 503
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
    // Release assets (add_remote_options).
    std::optional<std::string> github_api_url;
    std::optional<std::string> github_token;
    std::optional<std::string> ca_bundle;
    std::optional<std::string> remote_allowed_hosts;  // comma-separated
    std::optional<bool> remote_allow_private_addresses;
    std::optional<std::string> remote_download_mode;
    std::optional<unsigned> remote_connect_timeout;
    std::optional<unsigned> remote_read_timeout;
    std::optional<unsigned> remote_proxy_downloads;
};

// Registers --config, --data (WHEELHOUSE_DATA) and, with `server_options`, every server option
// (the remote ones included).
void add_options(CLI::App& command, overrides& values, bool server_options);

// Registers the options of fetching release assets (--github-api-url, --github-token,
// --ca-bundle, --remote-*): for commands that fetch without serving (register, import-release).
void add_remote_options(CLI::App& command, overrides& values);

// The HTTP client's settings: the allow-list, private addresses, CA bundle and deadlines.
// Plain http:// is never allowed here.
remote::client_settings client_settings_from(const settings& values);

// Defaults, then the TOML file, then the overrides. The error names the file, key and problem.
result<settings> resolve(const overrides& values);

// "127.0.0.1:8080", "[::1]:0", ":8080" (all addresses) -> host and port.
result<std::pair<std::string, unsigned short>> split_listen_address(const std::string& listen);

}  // namespace wheelhouse::config
