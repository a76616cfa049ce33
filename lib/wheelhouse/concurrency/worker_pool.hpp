#pragma once
// A fixed set of threads behind a bounded queue, for the slow part of a request (unzip,
// hash, catalog write): I/O threads never block on it, and when the queue is full the
// caller learns so at once and can answer 503 with Retry-After instead of hanging.

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string_view>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

namespace wheelhouse::concurrency {

// A move-only `void()` callable. Jobs capture spool files and response handles that cannot
// be copied, which std::function (it must be copyable) cannot hold, and
// std::move_only_function is C++23, beyond g++ 12.
class job {
public:
    job() noexcept = default;

    template <class Callable>
        requires(!std::is_same_v<std::remove_cvref_t<Callable>, job> && std::is_invocable_v<std::decay_t<Callable>&>)
    job(Callable&& callable)  // NOLINT: implicit, so a lambda can be passed where a job is wanted
        : callable_(std::make_unique<holder<std::decay_t<Callable>>>(std::forward<Callable>(callable))) {}

    job(job&&) noexcept = default;
    job& operator=(job&&) noexcept = default;

    explicit operator bool() const noexcept { return callable_ != nullptr; }
    void operator()() { callable_->invoke(); }  // precondition: not empty

private:
    struct callable_base {
        virtual ~callable_base() = default;
        virtual void invoke() = 0;
    };
    template <class Callable>
    struct holder final : callable_base {
        template <class Argument>
        explicit holder(Argument&& argument) : callable(std::forward<Argument>(argument)) {}
        void invoke() override { callable(); }
        Callable callable;
    };

    std::unique_ptr<callable_base> callable_;
};

class worker_pool {
public:
    // Told what a job threw (its what(), or a note that it was no std::exception). Called on
    // the worker thread; what it throws is swallowed.
    using error_handler = std::function<void(std::string_view what)>;

    enum class shutdown_mode {
        drain,    // run every queued job, then stop
        discard,  // destroy queued jobs unrun (their captures' destructors clean up), then stop
    };

    // Starts `threads` workers (at least one) and a queue that holds at most `queue_capacity`
    // jobs waiting for a worker (at least one); jobs being run do not count against it.
    worker_pool(std::size_t threads, std::size_t queue_capacity, error_handler on_job_error = {});
    worker_pool(const worker_pool&) = delete;
    worker_pool& operator=(const worker_pool&) = delete;

    // shutdown(drain): finishes queued jobs and joins. Must not run on a worker thread.
    ~worker_pool();

    // Queues `work` unless the queue is full or the pool is shutting down; never blocks on a
    // job. On false `work` is left untouched, so the caller can still answer 503 with
    // whatever it captured.
    // Thread safety: any thread, including a worker.
    bool try_submit(job&& work);

    // Jobs waiting for a worker, at the moment of the call.
    // Thread safety: any thread.
    std::size_t queue_depth() const;

    // Thread safety: any thread.
    std::size_t capacity() const noexcept { return capacity_; }
    std::size_t thread_count() const noexcept { return workers_.size(); }
    std::uint64_t rejected_total() const noexcept { return rejected_.load(std::memory_order_relaxed); }

    // Stops taking jobs, drains or discards the queue, waits for running jobs to return and
    // joins the workers. Returns how many queued jobs were discarded. Idempotent; a later
    // call can still discard what an earlier drain has not run yet.
    // Thread safety: any thread but a worker (a job cannot wait for its own thread).
    std::size_t shutdown(shutdown_mode mode = shutdown_mode::drain);

private:
    void work();
    void run(job& next) noexcept;

    const std::size_t capacity_;
    error_handler on_job_error_;
    mutable std::mutex mutex_;  // guards queue_ and stopping_
    std::condition_variable work_available_;
    std::deque<job> queue_;
    bool stopping_ = false;
    std::atomic<std::uint64_t> rejected_{0};
    std::mutex join_mutex_;  // one joiner at a time; the others wait for it
    std::vector<std::thread> workers_;
};

}  // namespace wheelhouse::concurrency
