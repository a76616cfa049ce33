#include "wheelhouse/config/settings.hpp"

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <thread>

#include <boost/url/ipv6_address.hpp>
#include <boost/url/parse.hpp>
#include <toml++/toml.h>

namespace wheelhouse::config {
namespace {

template <class T>
void apply(T& target, const std::optional<T>& value) {
    if (value) target = *value;
}

std::string trimmed(std::string_view text) {
    const auto first = text.find_first_not_of(" \t");
    if (first == std::string_view::npos) return {};
    const auto last = text.find_last_not_of(" \t");
    return std::string(text.substr(first, last - first + 1));
}

// "github.com, [::1] ,127.0.0.1" -> the entries, lower case; an entry that is no host fails.
result<std::vector<std::string>> parse_host_list(const std::vector<std::string>& entries) {
    std::vector<std::string> hosts;
    for (const auto& raw : entries) {
        std::string host = trimmed(raw);
        std::transform(host.begin(), host.end(), host.begin(),
                       [](unsigned char c) { return static_cast<char>(c >= 'A' && c <= 'Z' ? c + 32 : c); });
        if (host.empty()) continue;
        std::string bare = host;
        if (bare.size() >= 2 && bare.front() == '[' && bare.back() == ']') bare = bare.substr(1, bare.size() - 2);
        const bool ipv6 = static_cast<bool>(boost::urls::parse_ipv6_address(bare));
        const bool name = std::all_of(host.begin(), host.end(), [](char c) {
            return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '-';
        });
        if (!ipv6 && !name) {
            return invalid("'" + raw + "' is not a host name or IP address; write names alone, without scheme, port or path "
                           "(e.g. github.com,objects.githubusercontent.com)");
        }
        hosts.push_back(host);
    }
    return hosts;
}

std::vector<std::string> split_commas(std::string_view text) {
    std::vector<std::string> parts;
    std::size_t start = 0;
    while (start <= text.size()) {
        const auto comma = text.find(',', start);
        const auto end = comma == std::string_view::npos ? text.size() : comma;
        parts.emplace_back(text.substr(start, end - start));
        start = end + 1;
    }
    return parts;
}

result<catalog::download_mode> parse_remote_mode(const std::string& text) {
    const auto mode = catalog::parse_download_mode(text);
    if (!mode || *mode == catalog::download_mode::local)
        return invalid("'" + text + "' is not a download mode; use redirect, proxy or cache");
    return *mode;
}

result<void> apply_file(settings& out, const std::string& path) {
    toml::table table;
    try {
        table = toml::parse_file(path);
    } catch (const toml::parse_error& failure) {
        return invalid("configuration file " + path + ": " + std::string(failure.description()) + " (line " +
                       std::to_string(failure.source().begin.line) + ")");
    }
    std::string problem;
    auto text = [&](std::string_view key, auto setter) {
        if (const auto* node = table.get(key)) {
            if (auto value = node->value<std::string>()) setter(*value);
            else problem = "'" + std::string(key) + "' must be a string";
        }
    };
    auto number = [&](std::string_view key, auto setter) {
        if (const auto* node = table.get(key)) {
            auto value = node->value<std::int64_t>();
            if (value && *value >= 0) setter(static_cast<std::uint64_t>(*value));
            else problem = "'" + std::string(key) + "' must be a non-negative integer";
        }
    };
    auto boolean = [&](std::string_view key, auto setter) {
        if (const auto* node = table.get(key)) {
            if (auto value = node->value<bool>()) setter(*value);
            else problem = "'" + std::string(key) + "' must be true or false";
        }
    };
    text("listen", [&](const std::string& v) { out.listen = v; });
    text("data", [&](const std::string& v) { out.data = v; });
    text("access-log", [&](const std::string& v) { out.access_log = v; });
    number("threads", [&](std::uint64_t v) { out.threads = static_cast<unsigned>(v); });
    number("page-max-age", [&](std::uint64_t v) { out.page_max_age = std::chrono::seconds(v); });
    number("max-upload-size", [&](std::uint64_t v) { out.max_upload_bytes = v; });
    number("idle-timeout", [&](std::uint64_t v) { out.idle_timeout = std::chrono::seconds(v); });
    number("read-timeout", [&](std::uint64_t v) { out.read_timeout = std::chrono::seconds(v); });
    number("drain-timeout", [&](std::uint64_t v) { out.drain_timeout = std::chrono::seconds(v); });
    number("ingest-workers", [&](std::uint64_t v) { out.ingest_workers = static_cast<unsigned>(v); });
    number("ingest-queue", [&](std::uint64_t v) { out.ingest_queue = static_cast<unsigned>(v); });
    boolean("private", [&](bool v) { out.private_index = v; });
    text("github-api-url", [&](const std::string& v) { out.github_api_url = v; });
    text("github-token", [&](const std::string& v) { out.github_token = v; });
    text("ca-bundle", [&](const std::string& v) { out.ca_bundle = v; });
    if (const auto* node = table.get("remote-allowed-hosts")) {
        // An array of names, or one comma-separated string as on the command line.
        std::vector<std::string> entries;
        if (auto single = node->value<std::string>()) {
            entries = split_commas(*single);
        } else if (const auto* array = node->as_array()) {
            for (const auto& element : *array) {
                if (auto name = element.value<std::string>()) entries.push_back(*name);
                else problem = "'remote-allowed-hosts' must be an array of host names";
            }
        } else {
            problem = "'remote-allowed-hosts' must be an array of host names";
        }
        if (problem.empty()) {
            if (auto hosts = parse_host_list(entries)) out.remote_allowed_hosts = std::move(*hosts);
            else problem = "key 'remote-allowed-hosts': " + hosts.error().message;
        }
    }
    boolean("remote-allow-private-addresses", [&](bool v) { out.remote_allow_private_addresses = v; });
    text("remote-download-mode", [&](const std::string& v) {
        if (auto mode = parse_remote_mode(v)) out.remote_download_mode = *mode;
        else problem = "key 'remote-download-mode': " + mode.error().message;
    });
    number("remote-connect-timeout", [&](std::uint64_t v) { out.remote_connect_timeout = std::chrono::seconds(v); });
    number("remote-read-timeout", [&](std::uint64_t v) { out.remote_read_timeout = std::chrono::seconds(v); });
    number("remote-proxy-downloads", [&](std::uint64_t v) { out.remote_proxy_downloads = static_cast<unsigned>(v); });
    if (!problem.empty()) return invalid("configuration file " + path + ": " + problem);
    for (const auto& [key, node] : table) {
        static constexpr std::string_view known[] = {
            "listen",         "data",           "access-log",           "threads",
            "page-max-age",   "max-upload-size", "idle-timeout",        "read-timeout",
            "drain-timeout",  "ingest-workers", "ingest-queue",         "private",
            "github-api-url", "github-token",   "ca-bundle",            "remote-allowed-hosts",
            "remote-allow-private-addresses",   "remote-download-mode", "remote-connect-timeout",
            "remote-read-timeout", "remote-proxy-downloads"};
        if (std::find(std::begin(known), std::end(known), key.str()) == std::end(known))
            return invalid("configuration file " + path + ": unknown key '" + std::string(key.str()) + "'");
    }
    return {};
}

// The remote overrides over `out`, then checks of the remote settings wherever they came from.
result<void> apply_remote(settings& out, const overrides& values) {
    // Where a bad value came from: the flag or its variable, or else the file.
    auto source = [&](bool given, std::string_view flag) -> std::string {
        if (given || !values.config_file) return std::string(flag);
        return "configuration file " + *values.config_file + ": key '" + std::string(flag.substr(2)) + "'";
    };
    if (values.github_api_url) out.github_api_url = *values.github_api_url;
    if (values.github_token) out.github_token = *values.github_token;
    if (values.ca_bundle) out.ca_bundle = *values.ca_bundle;
    if (values.remote_allowed_hosts) {
        auto hosts = parse_host_list(split_commas(*values.remote_allowed_hosts));
        if (!hosts) return invalid("--remote-allowed-hosts: " + hosts.error().message);
        out.remote_allowed_hosts = std::move(*hosts);
    }
    if (values.remote_allow_private_addresses) out.remote_allow_private_addresses = *values.remote_allow_private_addresses;
    if (values.remote_download_mode) {
        auto mode = parse_remote_mode(*values.remote_download_mode);
        if (!mode) return invalid("--remote-download-mode: " + mode.error().message);
        out.remote_download_mode = *mode;
    }
    if (values.remote_connect_timeout) out.remote_connect_timeout = std::chrono::seconds(*values.remote_connect_timeout);
    if (values.remote_read_timeout) out.remote_read_timeout = std::chrono::seconds(*values.remote_read_timeout);
    if (values.remote_proxy_downloads) out.remote_proxy_downloads = *values.remote_proxy_downloads;
    if (out.remote_proxy_downloads == 0) {
        return invalid(source(values.remote_proxy_downloads.has_value(), "--remote-proxy-downloads") +
                       ": must be at least 1");
    }

    if (out.remote_connect_timeout.count() == 0) {
        return invalid(source(values.remote_connect_timeout.has_value(), "--remote-connect-timeout") + ": must be at least 1 second");
    }
    if (out.remote_read_timeout.count() == 0) {
        return invalid(source(values.remote_read_timeout.has_value(), "--remote-read-timeout") + ": must be at least 1 second");
    }
    if (!out.ca_bundle.empty()) {
        std::error_code ec;
        if (!std::filesystem::is_regular_file(out.ca_bundle, ec)) {
            return invalid(source(values.ca_bundle.has_value(), "--ca-bundle") + ": '" + out.ca_bundle +
                           "' is not a readable file; give a PEM file of CA certificates");
        }
    }
    // Syntax only: whether its host is allowed is the client's to say when it is used.
    const auto api = boost::urls::parse_uri(out.github_api_url);
    if (!api || api->scheme() != "https" || api->host_address().empty()) {
        return invalid(source(values.github_api_url.has_value(), "--github-api-url") + ": '" + out.github_api_url +
                       "' is not an https:// URL; write it as https://api.github.com or https://HOST/api/v3");
    }
    return {};
}

}  // namespace

void add_options(CLI::App& command, overrides& values, bool server_options) {
    command.add_option("--config", values.config_file, "TOML configuration file (keys as the long options)")
        ->envname("WHEELHOUSE_CONFIG");
    command.add_option("--data", values.data, "Data folder: catalog.db, blobs/, tmp/ (default ./var)")
        ->envname("WHEELHOUSE_DATA");
    if (!server_options) return;
    command.add_option("--listen", values.listen, "Address and port to listen on (default 127.0.0.1:8080; port 0 picks one)")
        ->envname("WHEELHOUSE_LISTEN");
    command.add_option("--threads", values.threads, "I/O threads (default: one per core)")->envname("WHEELHOUSE_THREADS");
    command.add_option("--access-log", values.access_log, "Access log: '-' for stdout, 'off', or a file path")
        ->envname("WHEELHOUSE_ACCESS_LOG");
    command.add_option("--page-max-age", values.page_max_age, "Cache-Control max-age of simple pages, seconds (default 60)")
        ->envname("WHEELHOUSE_PAGE_MAX_AGE");
    command.add_option("--max-upload-size", values.max_upload_bytes, "Largest upload in bytes (default 4 GiB)")
        ->envname("WHEELHOUSE_MAX_UPLOAD_SIZE");
    command.add_option("--idle-timeout", values.idle_timeout, "Seconds a kept-alive connection may wait (default 30)")
        ->envname("WHEELHOUSE_IDLE_TIMEOUT");
    command.add_option("--read-timeout", values.read_timeout, "Seconds a client may go silent mid-request (default 30)")
        ->envname("WHEELHOUSE_READ_TIMEOUT");
    command.add_option("--drain-timeout", values.drain_timeout, "Seconds to finish requests on SIGTERM (default 10)")
        ->envname("WHEELHOUSE_DRAIN_TIMEOUT");
    command.add_option("--ingest-workers", values.ingest_workers, "Threads validating uploads (default: one per core)")
        ->envname("WHEELHOUSE_INGEST_WORKERS");
    command.add_option("--ingest-queue", values.ingest_queue, "Uploads that may wait for a worker before 503 (default 16)")
        ->envname("WHEELHOUSE_INGEST_QUEUE");
    // A counting flag: only called when --private or WHEELHOUSE_PRIVATE is given, with a count
    // of at most 0 for WHEELHOUSE_PRIVATE=0/false, so the file's setting stands otherwise.
    command.add_flag_function(
            "--private", [&values](std::int64_t count) { values.private_index = count > 0; },
            "Private index: reading pages and files needs a token too (pip: "
            "--index-url http://__token__:TOKEN@HOST/simple/); WHEELHOUSE_PRIVATE=0 overrides the "
            "file's private = true")
        ->envname("WHEELHOUSE_PRIVATE");
    add_remote_options(command, values);
}

void add_remote_options(CLI::App& command, overrides& values) {
    command.add_option("--github-api-url", values.github_api_url,
                       "GitHub REST API base URL (default https://api.github.com; Enterprise: https://HOST/api/v3)")
        ->envname("WHEELHOUSE_GITHUB_API_URL");
    command.add_option("--github-token", values.github_token,
                       "GitHub token for private repositories' releases and assets (prefer WHEELHOUSE_GITHUB_TOKEN)")
        ->envname("WHEELHOUSE_GITHUB_TOKEN");
    command.add_option("--ca-bundle", values.ca_bundle,
                       "PEM file of CAs trusted for release hosts, instead of the system's store")
        ->envname("WHEELHOUSE_CA_BUNDLE");
    command.add_option("--remote-allowed-hosts", values.remote_allowed_hosts,
                       "Comma-separated hosts release assets may be fetched from (default github.com,"
                       "objects.githubusercontent.com,release-assets.githubusercontent.com,api.github.com)")
        ->envname("WHEELHOUSE_REMOTE_ALLOWED_HOSTS");
    command.add_flag_function(
            "--remote-allow-private-addresses",
            [&values](std::int64_t count) { values.remote_allow_private_addresses = count > 0; },
            "Let release hosts resolve to loopback, private and link-local addresses (tests only)")
        ->envname("WHEELHOUSE_REMOTE_ALLOW_PRIVATE_ADDRESSES");
    command.add_option("--remote-download-mode", values.remote_download_mode,
                       "Downloads of release assets: redirect (302 to GitHub), proxy (streamed through), "
                       "cache (streamed once, then kept); default redirect")
        ->envname("WHEELHOUSE_REMOTE_DOWNLOAD_MODE");
    command.add_option("--remote-connect-timeout", values.remote_connect_timeout,
                       "Seconds to resolve, connect and shake hands with a release host (default 10)")
        ->envname("WHEELHOUSE_REMOTE_CONNECT_TIMEOUT");
    command.add_option("--remote-read-timeout", values.remote_read_timeout,
                       "Seconds a release host may go silent mid-answer (default 30)")
        ->envname("WHEELHOUSE_REMOTE_READ_TIMEOUT");
    command.add_option("--remote-proxy-downloads", values.remote_proxy_downloads,
                       "Downloads streamed from release hosts at once (proxy and cache modes; one thread each); "
                       "more get 503 with Retry-After (default 16)")
        ->envname("WHEELHOUSE_REMOTE_PROXY_DOWNLOADS");
}

remote::client_settings client_settings_from(const settings& values) {
    remote::client_settings out;
    out.policy.allowed_hosts = values.remote_allowed_hosts;
    out.policy.allow_private_addresses = values.remote_allow_private_addresses;
    out.policy.allow_plain_http = false;
    out.ca_bundle = values.ca_bundle;
    out.connect_timeout = values.remote_connect_timeout;
    out.read_timeout = values.remote_read_timeout;
    return out;
}

result<settings> resolve(const overrides& values) {
    settings out;
    if (values.config_file) {
        if (auto applied = apply_file(out, *values.config_file); !applied) return applied.error();
    }
    apply(out.listen, values.listen);
    if (values.data) out.data = *values.data;
    apply(out.threads, values.threads);
    apply(out.access_log, values.access_log);
    if (values.page_max_age) out.page_max_age = std::chrono::seconds(*values.page_max_age);
    apply(out.max_upload_bytes, values.max_upload_bytes);
    if (values.idle_timeout) out.idle_timeout = std::chrono::seconds(*values.idle_timeout);
    if (values.read_timeout) out.read_timeout = std::chrono::seconds(*values.read_timeout);
    if (values.drain_timeout) out.drain_timeout = std::chrono::seconds(*values.drain_timeout);
    apply(out.ingest_workers, values.ingest_workers);
    apply(out.ingest_queue, values.ingest_queue);
    if (values.private_index) out.private_index = *values.private_index;
    if (auto remote = apply_remote(out, values); !remote) return remote.error();
    if (out.ingest_workers == 0) out.ingest_workers = std::max(1u, std::thread::hardware_concurrency());
    if (out.threads == 0) out.threads = std::max(1u, std::thread::hardware_concurrency());
    if (auto address = split_listen_address(out.listen); !address) {
        if (!values.listen && values.config_file) {
            return invalid("configuration file " + *values.config_file + ": key 'listen': " + address.error().message);
        }
        return address.error();
    }
    return out;
}

result<std::pair<std::string, unsigned short>> split_listen_address(const std::string& listen) {
    const auto colon = listen.rfind(':');
    if (colon == std::string::npos)
        return invalid("listen address '" + listen + "' has no port; write it as HOST:PORT, e.g. 127.0.0.1:8080");
    std::string host = listen.substr(0, colon);
    const std::string port_text = listen.substr(colon + 1);
    if (host.size() >= 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
    if (host.empty()) host = "0.0.0.0";
    unsigned port = 0;
    const auto [end, ec] = std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
    if (ec != std::errc{} || end != port_text.data() + port_text.size() || port > 65535)
        return invalid("listen address '" + listen + "' has no valid port (0-65535)");
    return std::pair{host, static_cast<unsigned short>(port)};
}

}  // namespace wheelhouse::config
