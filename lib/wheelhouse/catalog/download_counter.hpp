#pragma once
// Downloads per file per UTC day (schema/0003_download_counts.sql). Counting must not slow
// the download path: record() adds to a map in memory, and a thread of this object's own adds
// the counts to the catalog about once a second, in one write transaction for all of them.

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "wheelhouse/catalog/catalog.hpp"
#include "wheelhouse/result.hpp"
#include "wheelhouse/sqlite/connection.hpp"

namespace wheelhouse::catalog {

// "2026-11-22" for a Unix time in milliseconds.
std::string utc_day(std::int64_t unix_milliseconds);

struct daily_downloads {
    std::string day;  // "YYYY-MM-DD", UTC
    std::int64_t count = 0;
};

// Every day `file_id` was downloaded on, oldest first.
result<std::vector<daily_downloads>> read_downloads(sqlite::connection& db, std::int64_t file_id);

class download_counter {
public:
    // Starts the flushing thread. Thread safety: construct and destroy on one thread.
    explicit download_counter(catalog& catalog, std::chrono::milliseconds interval = std::chrono::seconds(1));
    download_counter(const download_counter&) = delete;
    download_counter& operator=(const download_counter&) = delete;
    // Stops the thread and writes what is still counted.
    ~download_counter();

    // One download of the file with this catalog id, now (or at `unix_milliseconds`).
    // Thread safety: any thread; takes a mutex for a map insert, never touches the database.
    void record(std::int64_t file_id);
    void record(std::int64_t file_id, std::int64_t unix_milliseconds);

    // Writes the counts gathered so far. Counts for files deleted meanwhile are dropped; on a
    // failure (the database busy) they are kept for the next flush. Thread safety: any thread.
    result<void> flush();

private:
    using day_number = std::int64_t;  // days since 1970-01-01
    using counts = std::map<std::pair<std::int64_t, day_number>, std::int64_t>;

    void run();

    catalog& catalog_;
    std::chrono::milliseconds interval_;
    std::mutex pending_mutex_;
    counts pending_;
    std::mutex flush_mutex_;  // one flush at a time, so a failed flush merges back in order
    std::mutex wake_mutex_;
    std::condition_variable wake_;
    bool stopping_ = false;  // under wake_mutex_
    std::thread flusher_;
};

}  // namespace wheelhouse::catalog
