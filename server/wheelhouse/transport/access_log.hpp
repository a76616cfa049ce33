#pragma once
// One line a request: peer, method, target, status, bytes, microseconds; and the same facts
// added to the request counters of /metrics, so both are recorded in one place.

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

namespace wheelhouse::metrics {
class server_metrics;
}
namespace spdlog {
class logger;
}

namespace wheelhouse::transport {

class access_log {
public:
    // `destination` is "-" for standard output, "off" for none, or a file path. `metrics`, when
    // given, counts every request whether or not lines are written; it must outlive the log.
    // Thread safety: record() may be called from any thread; lines are written asynchronously.
    explicit access_log(const std::string& destination, metrics::server_metrics* metrics = nullptr);
    ~access_log();
    access_log(const access_log&) = delete;
    access_log& operator=(const access_log&) = delete;

    void record(std::string_view peer, std::string_view method, std::string_view target, unsigned status,
                std::uint64_t bytes, std::chrono::microseconds elapsed);
    void flush();

private:
    std::shared_ptr<spdlog::logger> logger_;
    metrics::server_metrics* metrics_;
};

}  // namespace wheelhouse::transport
