#pragma once
// One line a request: time (UTC), peer, method, target, status, bytes, microseconds; and the same
// facts added to the request counters of /metrics, so both are recorded in one place.
//
// Each recording thread formats its lines into a block of its own; a writer thread writes a block
// with one write(2) when it is full, and every thread's partial block once a second and on flush().
// Blocks hold whole lines and only the writer writes, so lines never tear or interleave; lines of
// different threads may reach the file up to a second out of time order, as with nginx's
// `access_log … buffer=`. Nothing is dropped under load: up to `queued_limit` bytes of full blocks
// wait for the writer, and past that record() waits for it, so the server slows to the pace of its
// log's destination instead of losing lines. A line is lost only when its write fails (a full disk,
// a closed pipe): it is counted in /metrics and said on stderr.

#include <array>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "wheelhouse/metrics/route.hpp"
#include "wheelhouse/result.hpp"
#include "wheelhouse/storage/descriptor.hpp"

namespace wheelhouse::metrics {
class server_metrics;
}

namespace wheelhouse::transport {

class access_log {
public:
    // A thread hands its block to the writer once it holds this much.
    static constexpr std::size_t block_bytes = 64 * 1024;
    // Full blocks waiting for the writer, past which record() waits (a slow disk or pipe).
    static constexpr std::size_t queued_limit = 8 * 1024 * 1024;
    // How long a line may wait in a partial block.
    static constexpr std::chrono::milliseconds flush_interval{1000};

    // `destination` is "-" for standard output, "off" for none, or a file, opened for appending
    // (its folder is created); ready() says whether it could be. `metrics`, when given, counts
    // every request whether or not lines are written, and lines lost; it must outlive the log.
    explicit access_log(const std::string& destination, metrics::server_metrics* metrics = nullptr);
    // Writes every line recorded so far.
    ~access_log();
    access_log(const access_log&) = delete;
    access_log& operator=(const access_log&) = delete;

    // Why the destination cannot be written, with the fix; checked before serving.
    result<void> ready() const;

    // `route`: the label /metrics counts the request under (body_plan::label).
    // Thread safety: any thread. Waits only while the writer is `queued_limit` behind.
    void record(std::string_view peer, std::string_view method, std::string_view target, metrics::route route,
                unsigned status, std::uint64_t bytes, std::chrono::microseconds elapsed);
    // Returns once every line recorded before the call is written (or counted lost).
    // Thread safety: any thread.
    void flush();

private:
    struct block {
        std::string bytes;  // whole lines, each ending in '\n'
        std::size_t lines = 0;
    };
    // One recording thread's block, and the time stamp of the second it last wrote.
    struct thread_buffer {
        std::mutex mutex;
        block pending;
        std::int64_t stamped_second = -1;
        std::array<char, 20> stamp{};  // "YYYY-MM-DDTHH:MM:SS."
    };

    thread_buffer& buffer_of_this_thread();
    void append_line(thread_buffer& buffer, std::string_view peer, std::string_view method, std::string_view target,
                     unsigned status, std::uint64_t bytes, std::chrono::microseconds elapsed);
    void queue(block&& full);  // with the buffer's mutex held, so a thread's blocks stay in order
    void wait_for_room();
    void run_writer();
    void queue_partial_blocks();
    void write_out(const block& lines);
    void note_lost(std::size_t lines, int error_number);

    const std::uint64_t id_;  // never reused, unlike an address: keys the threads' cached buffers
    std::string destination_;
    metrics::server_metrics* metrics_;
    storage::descriptor file_;
    std::optional<error> failure_;

    std::mutex buffers_mutex_;
    std::map<std::thread::id, std::unique_ptr<thread_buffer>> buffers_;

    std::mutex queue_mutex_;
    std::condition_variable wake_writer_;  // a full block, a flush, or the end
    std::condition_variable written_;      // room in the queue, or a flush done
    std::deque<block> queued_;
    std::size_t queued_bytes_ = 0;
    std::uint64_t flushes_asked_ = 0;
    std::uint64_t flushes_done_ = 0;
    bool stopping_ = false;

    // The writer's own: a write that failed part-way left a torn line to end; lines lost in a row.
    bool torn_line_ = false;
    std::uint64_t lost_in_a_row_ = 0;
    std::thread writer_;
};

}  // namespace wheelhouse::transport
