// The TOML configuration file (config/settings), resolved from a file holding the input.
// Beside memory safety (toml++ and our reading of it), for a file that resolves:
// - every number the file gives is the number the server runs with (no silent truncation), a
//   0 meaning "one per core" for threads and ingest workers;
// - every string and boolean the file gives is taken as given;
// - the listen address splits into host and port.

#include <sys/mman.h>
#include <unistd.h>

#include <cstdlib>
#include <functional>
#include <string>

#include <toml++/toml.h>

#include "fuzz_support.hpp"
#include "wheelhouse/config/settings.hpp"

namespace {

namespace config = wheelhouse::config;

class memory_file {
public:
    memory_file() : fd_(memfd_create("wheelhouse.toml", 0)) {
        if (fd_ < 0) std::abort();
    }
    ~memory_file() { close(fd_); }
    std::string write(std::string_view bytes) {
        if (ftruncate(fd_, 0) != 0 || pwrite(fd_, bytes.data(), bytes.size(), 0) != static_cast<ssize_t>(bytes.size()))
            std::abort();
        return "/proc/self/fd/" + std::to_string(fd_);
    }

private:
    int fd_;
};

struct number_key {
    std::string_view key;
    std::function<std::uint64_t(const config::settings&)> value;
    bool zero_means_default;
};

const number_key number_keys[] = {
    {"threads", [](const config::settings& s) -> std::uint64_t { return s.threads; }, true},
    {"ingest-workers", [](const config::settings& s) -> std::uint64_t { return s.ingest_workers; }, true},
    {"ingest-queue", [](const config::settings& s) -> std::uint64_t { return s.ingest_queue; }, false},
    {"max-upload-size", [](const config::settings& s) -> std::uint64_t { return s.max_upload_bytes; }, false},
    {"page-max-age", [](const config::settings& s) -> std::uint64_t { return s.page_max_age.count(); }, false},
    {"idle-timeout", [](const config::settings& s) -> std::uint64_t { return s.idle_timeout.count(); }, false},
    {"read-timeout", [](const config::settings& s) -> std::uint64_t { return s.read_timeout.count(); }, false},
    {"drain-timeout", [](const config::settings& s) -> std::uint64_t { return s.drain_timeout.count(); }, false},
    {"remote-connect-timeout", [](const config::settings& s) -> std::uint64_t { return s.remote_connect_timeout.count(); }, false},
    {"remote-read-timeout", [](const config::settings& s) -> std::uint64_t { return s.remote_read_timeout.count(); }, false},
    {"remote-proxy-downloads", [](const config::settings& s) -> std::uint64_t { return s.remote_proxy_downloads; }, false},
};

void check_as_given(const toml::table& file, const config::settings& resolved) {
    for (const auto& number : number_keys) {
        const auto given = file[number.key].value_exact<std::int64_t>();
        if (!given) continue;
        const std::uint64_t used = number.value(resolved);
        if (number.zero_means_default && *given == 0) {
            WHEELHOUSE_FUZZ_CHECK(used >= 1, std::string(number.key));
            continue;
        }
        WHEELHOUSE_FUZZ_CHECK(used == static_cast<std::uint64_t>(*given),
                              std::string(number.key) + " = " + std::to_string(*given) + " runs as " + std::to_string(used));
    }
    auto same_text = [&](std::string_view key, const std::string& used) {
        if (auto given = file[key].value<std::string>())
            WHEELHOUSE_FUZZ_CHECK(*given == used, std::string(key) + " = " + *given + " runs as " + used);
    };
    same_text("listen", resolved.listen);
    same_text("data", resolved.data.string());
    same_text("access-log", resolved.access_log);
    same_text("github-api-url", resolved.github_api_url);
    same_text("github-token", resolved.github_token);
    same_text("ca-bundle", resolved.ca_bundle);
    if (auto given = file["private"].value<bool>()) WHEELHOUSE_FUZZ_CHECK(*given == resolved.private_index, "private");
    if (auto given = file["remote-allow-private-addresses"].value<bool>())
        WHEELHOUSE_FUZZ_CHECK(*given == resolved.remote_allow_private_addresses, "remote-allow-private-addresses");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    static memory_file file;
    const auto text = wheelhouse::fuzz::as_text(data, size);
    config::overrides values;
    values.config_file = file.write(text);
    auto resolved = config::resolve(values);
    if (!resolved) {
        WHEELHOUSE_FUZZ_CHECK(!resolved.error().message.empty(), std::string(text));
        return 0;
    }
    WHEELHOUSE_FUZZ_CHECK(config::split_listen_address(resolved->listen).has_value(), resolved->listen);
    toml::table table;
    try {
        table = toml::parse(text);
    } catch (const toml::parse_error&) {
        wheelhouse::fuzz::property_failed("the file resolved but does not parse here", std::string(text));
    }
    check_as_given(table, *resolved);
    return 0;
}
