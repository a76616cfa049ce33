#include "wheelhouse/transport/access_log.hpp"

#include <spdlog/async.h>
#include <spdlog/sinks/basic_file_sink.h>
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

#include <atomic>
#include <mutex>

#include "wheelhouse/metrics/server_metrics.hpp"

namespace wheelhouse::transport {
namespace {

std::shared_ptr<spdlog::logger> make_logger(const std::string& destination) {
    if (destination == "off") return nullptr;
    // One background thread formats nothing: lines are formatted by the caller and only the
    // write happens there. Under overload the oldest queued lines go, never a request's time.
    static std::once_flag pool_once;
    std::call_once(pool_once, [] { spdlog::init_thread_pool(64 * 1024, 1); });
    std::shared_ptr<spdlog::sinks::sink> sink;
    if (destination == "-") {
        sink = std::make_shared<spdlog::sinks::stdout_sink_mt>();
    } else {
        sink = std::make_shared<spdlog::sinks::basic_file_sink_mt>(destination);
    }
    static std::atomic<int> instances{0};
    auto logger = std::make_shared<spdlog::async_logger>("access-" + std::to_string(++instances), sink,
                                                         spdlog::thread_pool(),
                                                         spdlog::async_overflow_policy::overrun_oldest);
    logger->set_pattern("%Y-%m-%dT%H:%M:%S.%fZ %v", spdlog::pattern_time_type::utc);
    // Flushing every line would cost a write(2) a request; once a second keeps tails current.
    spdlog::register_logger(logger);
    spdlog::flush_every(std::chrono::seconds(1));
    return logger;
}

}  // namespace

access_log::access_log(const std::string& destination, metrics::server_metrics* metrics)
    : logger_(make_logger(destination)), metrics_(metrics) {}

access_log::~access_log() {
    flush();
    if (logger_) spdlog::drop(logger_->name());
}

void access_log::record(std::string_view peer, std::string_view method, std::string_view target, unsigned status,
                        std::uint64_t bytes, std::chrono::microseconds elapsed) {
    if (metrics_) metrics_->record_request(method, target, status, bytes, elapsed);
    if (!logger_) return;
    logger_->info("{} \"{} {}\" {} {} {}us", peer, method, target, status, bytes, elapsed.count());
}

void access_log::flush() {
    if (logger_) logger_->flush();
}

}  // namespace wheelhouse::transport
