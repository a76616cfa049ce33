#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <future>
#include <latch>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "wheelhouse/concurrency/worker_pool.hpp"

using namespace wheelhouse::concurrency;

namespace {

// Holds workers inside a job until the test opens it, so the queue state is known exactly.
class gate {
public:
    void wait() const { opened_.wait(); }
    void open() {
        if (!was_opened_.exchange(true)) promise_.set_value();
    }

private:
    std::promise<void> promise_;
    std::shared_future<void> opened_ = promise_.get_future().share();
    std::atomic<bool> was_opened_{false};
};

// Opens a gate when the test leaves its scope, even by a failed REQUIRE: declared after the
// pool, it runs before the pool's destructor waits for the held workers.
struct open_on_exit {
    gate& held;
    ~open_on_exit() { held.open(); }
};

// Occupies every worker of `pool` until `held` opens, returning once all of them are inside
// a job, so that nothing is left in the queue and no worker is free.
void occupy_all_workers(worker_pool& pool, const gate& held, std::atomic<int>& ran) {
    // One at a time: the queue may have room for a single waiting job.
    std::atomic<std::size_t> started{0};
    for (std::size_t i = 0; i < pool.thread_count(); ++i) {
        REQUIRE(pool.try_submit([&started, &held, &ran] {
            ++started;
            held.wait();
            ++ran;
        }));
        while (started < i + 1) std::this_thread::yield();
    }
    REQUIRE(pool.queue_depth() == 0);
}

// Counts how many of its kind are alive: shows whether a job's captures were destroyed.
struct tracked {
    explicit tracked(std::atomic<int>& live) : live_(&live) { ++*live_; }
    tracked(tracked&& other) noexcept : live_(std::exchange(other.live_, nullptr)) {}
    tracked(const tracked&) = delete;
    ~tracked() {
        if (live_) --*live_;
    }
    std::atomic<int>* live_;
};

}  // namespace

TEST_CASE("worker_pool: a job holds move-only captures and runs once", "[worker_pool]") {
    auto value = std::make_unique<int>(41);
    std::promise<int> seen;
    auto result = seen.get_future();
    job work = [value = std::move(value), &seen]() mutable { seen.set_value(++*value); };
    CHECK(work);
    job moved = std::move(work);
    CHECK_FALSE(work);  // NOLINT: checking the moved-from state on purpose
    worker_pool pool(1, 1);
    REQUIRE(pool.try_submit(std::move(moved)));
    CHECK(result.get() == 42);
}

TEST_CASE("worker_pool: every accepted job runs", "[worker_pool]") {
    std::atomic<int> ran{0};
    {
        worker_pool pool(4, 10000);
        CHECK(pool.thread_count() == 4);
        CHECK(pool.capacity() == 10000);
        for (int i = 0; i < 10000; ++i) REQUIRE(pool.try_submit([&] { ++ran; }));
        CHECK(pool.shutdown() == 0);
        CHECK(ran == 10000);
    }
    CHECK(ran == 10000);
}

TEST_CASE("worker_pool: the queue takes exactly its capacity, then refuses at once", "[worker_pool]") {
    for (const std::size_t threads : {1u, 3u}) {
        for (const std::size_t capacity : {1u, 2u, 5u}) {
            CAPTURE(threads, capacity);
            std::atomic<int> ran{0};
            gate held;
            worker_pool pool(threads, capacity);
            const open_on_exit release{held};
            occupy_all_workers(pool, held, ran);

            for (std::size_t i = 0; i < capacity; ++i) {
                REQUIRE(pool.try_submit([&] { ++ran; }));
                CHECK(pool.queue_depth() == i + 1);
            }
            std::atomic<int> live{0};
            job refused = [keep = tracked(live), &ran] { ++ran; };
            const auto before = std::chrono::steady_clock::now();
            CHECK_FALSE(pool.try_submit(std::move(refused)));
            CHECK_FALSE(pool.try_submit([&] { ++ran; }));
            CHECK(std::chrono::steady_clock::now() - before < std::chrono::seconds(1));  // no waiting for room
            CHECK(pool.rejected_total() == 2);
            CHECK(pool.queue_depth() == capacity);
            // The refused job is still the caller's, captures intact, to answer 503 with.
            CHECK(refused);
            CHECK(live == 1);

            held.open();
            pool.shutdown();
            CHECK(ran == static_cast<int>(threads + capacity));
            // Room again after the queue drained? Not after shutdown: the pool is closed.
            CHECK_FALSE(pool.try_submit([&] { ++ran; }));
            CHECK(pool.rejected_total() == 3);
        }
    }
}

TEST_CASE("worker_pool: room frees up as workers take jobs", "[worker_pool]") {
    std::atomic<int> ran{0};
    gate held;
    worker_pool pool(1, 2);
    const open_on_exit release{held};
    occupy_all_workers(pool, held, ran);
    gate second_held;
    const open_on_exit release_second{second_held};
    std::latch second_started(1);
    REQUIRE(pool.try_submit([&] {
        second_started.count_down();
        second_held.wait();
        ++ran;
    }));
    REQUIRE(pool.try_submit([&] { ++ran; }));
    CHECK_FALSE(pool.try_submit([&] { ++ran; }));
    held.open();              // the worker finishes the first job and takes the second
    second_started.wait();    // now one job waits: there is room for one more
    CHECK(pool.queue_depth() == 1);
    CHECK(pool.try_submit([&] { ++ran; }));
    CHECK_FALSE(pool.try_submit([&] { ++ran; }));
    second_held.open();
    pool.shutdown();
    CHECK(ran == 4);
}

TEST_CASE("worker_pool: shutdown drains or discards the queue", "[worker_pool]") {
    for (const auto mode : {worker_pool::shutdown_mode::drain, worker_pool::shutdown_mode::discard}) {
        const bool drain = mode == worker_pool::shutdown_mode::drain;
        CAPTURE(drain);
        std::atomic<int> ran{0};
        std::atomic<int> live{0};
        gate held;
        worker_pool pool(2, 1000);
        const open_on_exit release{held};
        occupy_all_workers(pool, held, ran);
        for (int i = 0; i < 5; ++i) REQUIRE(pool.try_submit([keep = tracked(live), &ran] { ++ran; }));
        CHECK(live == 5);

        // shutdown() waits for the running jobs, so it runs on its own thread while they are held.
        auto stopped = std::async(std::launch::async, [&] { return pool.shutdown(mode); });
        // Jobs are taken until shutdown has begun, and refused from then on.
        int late = 0;
        while (pool.try_submit([keep = tracked(live), &ran] { ++ran; })) {
            ++late;
            std::this_thread::sleep_for(std::chrono::milliseconds(1));
        }
        CHECK(pool.queue_depth() < pool.capacity());  // refused for closing, not for being full
        if (!drain) {
            while (live != 0) std::this_thread::yield();  // discarded jobs' captures are destroyed unrun
            CHECK(pool.queue_depth() == 0);
        }
        CHECK(stopped.wait_for(std::chrono::milliseconds(50)) == std::future_status::timeout);  // still joining
        held.open();
        CHECK(stopped.get() == (drain ? 0u : 5u + static_cast<unsigned>(late)));
        CHECK(ran == (drain ? 7 + late : 2));
        CHECK(live == 0);
        CHECK(pool.shutdown() == 0);  // idempotent
    }
}

TEST_CASE("worker_pool: a discarding shutdown can follow a draining one", "[worker_pool]") {
    std::atomic<int> ran{0};
    gate held;
    worker_pool pool(1, 10);
    const open_on_exit release{held};
    occupy_all_workers(pool, held, ran);
    for (int i = 0; i < 4; ++i) REQUIRE(pool.try_submit([&] { ++ran; }));
    auto draining = std::async(std::launch::async, [&] { return pool.shutdown(worker_pool::shutdown_mode::drain); });
    auto discarding =
        std::async(std::launch::async, [&] { return pool.shutdown(worker_pool::shutdown_mode::discard); });
    CHECK(discarding.wait_for(std::chrono::milliseconds(50)) == std::future_status::timeout);
    while (pool.queue_depth() != 0) std::this_thread::yield();
    held.open();
    CHECK(draining.get() == 0);
    CHECK(discarding.get() == 4);
    CHECK(ran == 1);
}

TEST_CASE("worker_pool: the destructor finishes queued jobs and joins", "[worker_pool]") {
    std::atomic<int> ran{0};
    {
        gate held;
        worker_pool pool(2, 100);
        const open_on_exit release{held};
        occupy_all_workers(pool, held, ran);
        for (int i = 0; i < 50; ++i) REQUIRE(pool.try_submit([&] { ++ran; }));
        held.open();
    }
    CHECK(ran == 52);
}

TEST_CASE("worker_pool: a throwing job is reported and the worker lives on", "[worker_pool]") {
    std::mutex reports_mutex;
    std::vector<std::string> reports;
    std::atomic<int> ran{0};
    {
        worker_pool pool(1, 10, [&](std::string_view what) {
            std::lock_guard lock(reports_mutex);
            reports.emplace_back(what);
            throw std::runtime_error("the error handler itself fails");  // swallowed too
        });
        REQUIRE(pool.try_submit([] { throw std::runtime_error("zip is corrupt"); }));
        REQUIRE(pool.try_submit([] { throw 7; }));
        REQUIRE(pool.try_submit([&] { ++ran; }));  // the single worker is still there
        REQUIRE(pool.try_submit([] { throw std::logic_error("bad state"); }));
        REQUIRE(pool.try_submit([&] { ++ran; }));
    }
    CHECK(ran == 2);
    REQUIRE(reports.size() == 3);
    CHECK(reports[0] == "zip is corrupt");
    CHECK(reports[1] == "a job threw something that is not a std::exception");
    CHECK(reports[2] == "bad state");

    // Without a handler, a throw is simply dropped.
    worker_pool quiet(1, 2);
    REQUIRE(quiet.try_submit([] { throw std::runtime_error("ignored"); }));
    REQUIRE(quiet.try_submit([&] { ++ran; }));
    quiet.shutdown();
    CHECK(ran == 3);
}

TEST_CASE("worker_pool: jobs may submit more jobs", "[worker_pool]") {
    std::atomic<int> ran{0};
    std::atomic<int> refused{0};
    worker_pool pool(2, 4);
    std::latch all_done(1);
    REQUIRE(pool.try_submit([&] {
        for (int i = 0; i < 3; ++i) {
            if (!pool.try_submit([&] { ++ran; })) ++refused;
        }
        all_done.count_down();
    }));
    all_done.wait();
    pool.shutdown();
    CHECK(ran + refused == 3);
    CHECK(refused == 0);  // four places, three jobs
}

TEST_CASE("worker_pool: many producers, bounded queue, no job lost or run twice", "[worker_pool]") {
    constexpr int producers = 8;
    constexpr int per_producer = 4000;
    std::vector<std::atomic<int>> runs(producers * per_producer);
    std::atomic<int> accepted{0};
    std::atomic<int> refused{0};
    std::atomic<bool> watching{true};
    std::atomic<std::size_t> deepest{0};

    worker_pool pool(4, 64);
    std::thread watcher([&] {
        while (watching) deepest = std::max<std::size_t>(deepest, pool.queue_depth());
    });
    std::vector<std::thread> threads;
    for (int p = 0; p < producers; ++p) {
        threads.emplace_back([&, p] {
            for (int i = 0; i < per_producer; ++i) {
                const int id = p * per_producer + i;
                if (pool.try_submit([&runs, id] { ++runs[static_cast<std::size_t>(id)]; })) {
                    ++accepted;
                } else {
                    ++refused;
                    std::this_thread::yield();
                }
            }
        });
    }
    for (auto& thread : threads) thread.join();
    pool.shutdown();
    watching = false;
    watcher.join();

    CHECK(accepted + refused == producers * per_producer);
    CHECK(pool.rejected_total() == static_cast<std::uint64_t>(refused.load()));
    CHECK(deepest <= pool.capacity());
    int ran = 0;
    bool any_twice = false;
    for (auto& count : runs) {
        ran += count;
        any_twice = any_twice || count > 1;
    }
    CHECK_FALSE(any_twice);
    CHECK(ran == accepted);
}
