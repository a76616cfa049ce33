#include "wheelhouse/config/settings.hpp"

#include <charconv>
#include <thread>

#include <toml++/toml.h>

namespace wheelhouse::config {
namespace {

template <class T>
void apply(T& target, const std::optional<T>& value) {
    if (value) target = *value;
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
    if (!problem.empty()) return invalid("configuration file " + path + ": " + problem);
    for (const auto& [key, node] : table) {
        static constexpr std::string_view known[] = {"listen",       "data",          "access-log",   "threads",
                                                     "page-max-age", "max-upload-size", "idle-timeout", "read-timeout",
                                                     "drain-timeout", "ingest-workers", "ingest-queue", "private"};
        if (std::find(std::begin(known), std::end(known), key.str()) == std::end(known))
            return invalid("configuration file " + path + ": unknown key '" + std::string(key.str()) + "'");
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
