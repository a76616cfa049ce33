#pragma once
// A body_source fed by a producer thread through a bounded queue: when the client reads slower
// than the producer writes, push() blocks the producer, and through it (TCP) the remote host,
// so no more than `capacity` bytes of a body wait in memory.

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

#include "wheelhouse/transport/body_source.hpp"

namespace wheelhouse::transport {

class relay_body final : public body_source {
public:
    explicit relay_body(std::size_t capacity = 4u << 20) : capacity_(capacity) {}

    // Producer side. Thread safety: one producer thread.
    // Queues `bytes`, waiting while the queue is full; false once cancelled (stop producing).
    bool push(std::string bytes);
    // A string to fill for the next push(): one the consumer has written out (so a long body
    // does not map and fault in fresh pages for every chunk), else an empty one.
    std::string take_buffer();
    // Every byte has been pushed.
    void finish();
    // The body cannot be completed; the session ends the connection.
    void fail();
    bool cancelled() const;
    // `stop` runs once when the consumer cancels (at once if it has), so the producer can
    // abandon a read it is blocked in rather than notice at its next push().
    void on_cancel(std::function<void()> stop);

    // Consumer side (body_source).
    piece next() override;
    void consume(std::size_t bytes) override;
    void on_ready(std::function<void()> wake) override;
    void cancel() noexcept override;

private:
    // Takes the wake to call, under `mutex_`; called after the lock is released.
    std::function<void()> take_wake_locked();

    const std::size_t capacity_;
    mutable std::mutex mutex_;
    std::condition_variable room_;  // the consumer took bytes, or cancel()
    std::deque<std::string> chunks_;
    std::vector<std::string> spares_;  // written chunks, emptied, for take_buffer()
    std::size_t queued_bytes_ = 0;
    std::size_t front_offset_ = 0;  // bytes of chunks_.front() already written
    bool finished_ = false;
    bool failed_ = false;
    bool cancelled_ = false;
    std::function<void()> wake_;
    std::function<void()> stop_;
};

}  // namespace wheelhouse::transport
