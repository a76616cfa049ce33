#include "wheelhouse/transport/relay_body.hpp"

#include <utility>

namespace wheelhouse::transport {
namespace {

constexpr std::size_t max_spares = 2;  // the producer fills one while another is held back

}  // namespace

// The wake is called with the mutex held: once cancel() has returned, no wake is running or
// will run, so a session that cancels in its destructor is never woken after it is gone.

bool relay_body::push(std::string bytes) {
    if (bytes.empty()) return !cancelled();
    std::unique_lock lock(mutex_);
    // An empty queue takes any chunk, so a chunk larger than the capacity cannot wait forever.
    room_.wait(lock, [&] { return cancelled_ || queued_bytes_ == 0 || queued_bytes_ + bytes.size() <= capacity_; });
    if (cancelled_) return false;
    queued_bytes_ += bytes.size();
    chunks_.push_back(std::move(bytes));
    if (auto wake = take_wake_locked()) wake();
    return true;
}

std::string relay_body::take_buffer() {
    std::lock_guard lock(mutex_);
    if (spares_.empty()) return {};
    auto spare = std::move(spares_.back());
    spares_.pop_back();
    return spare;
}

void relay_body::finish() {
    std::lock_guard lock(mutex_);
    finished_ = true;
    if (auto wake = take_wake_locked()) wake();
}

void relay_body::fail() {
    std::lock_guard lock(mutex_);
    failed_ = true;
    if (auto wake = take_wake_locked()) wake();
}

bool relay_body::cancelled() const {
    std::lock_guard lock(mutex_);
    return cancelled_;
}

void relay_body::on_cancel(std::function<void()> stop) {
    std::unique_lock lock(mutex_);
    if (!cancelled_) {
        stop_ = std::move(stop);
        return;
    }
    lock.unlock();
    stop();
}

body_source::piece relay_body::next() {
    std::lock_guard lock(mutex_);
    // A failure wins over queued bytes: they may be fine, but the body will not be whole.
    if (failed_ || cancelled_) return {state::failed, {}};
    if (!chunks_.empty()) {
        const auto& front = chunks_.front();
        return {state::ready, std::string_view(front).substr(front_offset_)};
    }
    return {finished_ ? state::finished : state::pending, {}};
}

void relay_body::consume(std::size_t bytes) {
    std::lock_guard lock(mutex_);
    if (chunks_.empty()) return;
    front_offset_ += bytes;
    if (front_offset_ < chunks_.front().size()) return;
    queued_bytes_ -= chunks_.front().size();
    if (spares_.size() < max_spares) {
        spares_.push_back(std::move(chunks_.front()));
        spares_.back().clear();  // keeps its capacity
    }
    chunks_.pop_front();
    front_offset_ = 0;
    room_.notify_one();
}

void relay_body::on_ready(std::function<void()> wake) {
    std::lock_guard lock(mutex_);
    if (cancelled_) return;
    if (!chunks_.empty() || finished_ || failed_) return wake();
    wake_ = std::move(wake);
}

void relay_body::cancel() noexcept {
    std::function<void()> stop;
    {
        std::lock_guard lock(mutex_);
        if (cancelled_) return;
        cancelled_ = true;
        wake_ = nullptr;
        stop = std::move(stop_);
        // The chunks stay: a write in flight may still be reading the front one.
        room_.notify_all();
    }
    if (stop) stop();  // outside the lock: it takes the producer's own
}

std::function<void()> relay_body::take_wake_locked() { return std::exchange(wake_, nullptr); }

}  // namespace wheelhouse::transport
