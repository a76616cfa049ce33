#include "wheelhouse/concurrency/worker_pool.hpp"

#include <algorithm>
#include <cassert>
#include <exception>

namespace wheelhouse::concurrency {

worker_pool::worker_pool(std::size_t threads, std::size_t queue_capacity, error_handler on_job_error)
    : capacity_(std::max<std::size_t>(queue_capacity, 1)), on_job_error_(std::move(on_job_error)) {
    threads = std::max<std::size_t>(threads, 1);
    workers_.reserve(threads);
    try {
        for (std::size_t i = 0; i < threads; ++i) workers_.emplace_back([this] { work(); });
    } catch (...) {
        shutdown(shutdown_mode::discard);  // threads already started must not outlive us
        throw;
    }
}

worker_pool::~worker_pool() { shutdown(shutdown_mode::drain); }

bool worker_pool::try_submit(job&& work) {
    assert(work);
    {
        std::lock_guard lock(mutex_);
        if (stopping_ || queue_.size() >= capacity_) {
            rejected_.fetch_add(1, std::memory_order_relaxed);
            return false;
        }
        queue_.push_back(std::move(work));
    }
    work_available_.notify_one();
    return true;
}

std::size_t worker_pool::queue_depth() const {
    std::lock_guard lock(mutex_);
    return queue_.size();
}

std::size_t worker_pool::shutdown(shutdown_mode mode) {
    std::deque<job> discarded;
    {
        std::lock_guard lock(mutex_);
        stopping_ = true;
        if (mode == shutdown_mode::discard) discarded.swap(queue_);
    }
    work_available_.notify_all();
    const auto discarded_count = discarded.size();
    discarded.clear();  // outside the lock: a job's captures may take locks of their own

    std::lock_guard join_lock(join_mutex_);
    for (auto& worker : workers_) {
        assert(worker.get_id() != std::this_thread::get_id());
        if (worker.joinable()) worker.join();
    }
    return discarded_count;
}

void worker_pool::work() {
    for (;;) {
        job next;
        {
            std::unique_lock lock(mutex_);
            work_available_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
            if (queue_.empty()) return;  // stopping, and nothing left to drain
            next = std::move(queue_.front());
            queue_.pop_front();
        }
        run(next);
    }  // `next` dies here, before the next wait: its captures are released promptly
}

void worker_pool::run(job& next) noexcept {
    const auto report = [this](std::string_view what) noexcept {
        if (!on_job_error_) return;
        try {
            on_job_error_(what);
        } catch (...) {  // a broken logger must not take a worker down with it
        }
    };
    try {
        next();
    } catch (const std::exception& failure) {
        report(failure.what());
    } catch (...) {
        report("a job threw something that is not a std::exception");
    }
}

}  // namespace wheelhouse::concurrency
