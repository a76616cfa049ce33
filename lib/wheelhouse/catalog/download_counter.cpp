#include "wheelhouse/catalog/download_counter.hpp"

#include <cstdio>

#include "wheelhouse/catalog/audit.hpp"
#include "wheelhouse/sqlite/statement.hpp"

namespace wheelhouse::catalog {
namespace {

constexpr std::int64_t milliseconds_per_day = 86'400'000;

std::int64_t day_of(std::int64_t unix_milliseconds) {
    // Floor division, so the instants before 1970 land on the right day too.
    auto day = unix_milliseconds / milliseconds_per_day;
    if (unix_milliseconds % milliseconds_per_day < 0) --day;
    return day;
}

std::string day_text(std::int64_t day) {
    const std::chrono::year_month_day date{std::chrono::sys_days{std::chrono::days{day}}};
    char text[16];
    std::snprintf(text, sizeof text, "%04d-%02u-%02u", static_cast<int>(date.year()),
                  static_cast<unsigned>(date.month()), static_cast<unsigned>(date.day()));
    return text;
}

}  // namespace

std::string utc_day(std::int64_t unix_milliseconds) { return day_text(day_of(unix_milliseconds)); }

result<std::vector<daily_downloads>> read_downloads(sqlite::connection& db, std::int64_t file_id) {
    auto query = db.cached("SELECT day, count FROM download_counts WHERE file_id = ?1 ORDER BY day");
    if (!query) return query.error();
    (*query)->bind_int64(1, file_id);
    std::vector<daily_downloads> days;
    for (;;) {
        auto row = (*query)->step();
        if (!row) return row.error();
        if (!*row) break;
        days.push_back({(*query)->column_text(0), (*query)->column_int64(1)});
    }
    return days;
}

download_counter::download_counter(catalog& catalog, std::chrono::milliseconds interval)
    : catalog_(catalog), interval_(interval), flusher_([this] { run(); }) {}

download_counter::~download_counter() {
    {
        std::lock_guard lock(wake_mutex_);
        stopping_ = true;
    }
    wake_.notify_all();
    flusher_.join();
    (void)flush();  // a failure here loses at most one interval's counts; shutdown goes on
}

void download_counter::record(std::int64_t file_id) { record(file_id, now_ms()); }

void download_counter::record(std::int64_t file_id, std::int64_t unix_milliseconds) {
    std::lock_guard lock(pending_mutex_);
    ++pending_[{file_id, day_of(unix_milliseconds)}];
}

result<void> download_counter::flush() {
    std::lock_guard flushing(flush_mutex_);
    counts batch;
    {
        std::lock_guard lock(pending_mutex_);
        batch.swap(pending_);
    }
    if (batch.empty()) return {};
    auto written = catalog_.write_transaction([&](sqlite::connection& db) -> result<void> {
        // A file deleted since its download has no row to count against: its counts are dropped.
        auto upsert = db.cached(
            "INSERT INTO download_counts (file_id, day, count) SELECT ?1, ?2, ?3 WHERE EXISTS "
            "(SELECT 1 FROM files WHERE id = ?1) ON CONFLICT (file_id, day) DO UPDATE SET count = count + excluded.count");
        if (!upsert) return upsert.error();
        for (const auto& [key, count] : batch) {
            (*upsert)->bind_int64(1, key.first).bind_text(2, day_text(key.second)).bind_int64(3, count);
            if (auto done = (*upsert)->run(); !done) return done.error();
            (*upsert)->reset();
        }
        return {};
    });
    if (!written) {
        std::lock_guard lock(pending_mutex_);
        for (const auto& [key, count] : batch) pending_[key] += count;
    }
    return written;
}

void download_counter::run() {
    std::unique_lock lock(wake_mutex_);
    while (!stopping_) {
        wake_.wait_for(lock, interval_, [this] { return stopping_; });
        if (stopping_) break;
        lock.unlock();
        (void)flush();  // kept and retried at the next tick
        lock.lock();
    }
}

}  // namespace wheelhouse::catalog
