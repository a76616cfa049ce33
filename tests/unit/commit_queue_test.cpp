#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <future>
#include <mutex>
#include <thread>
#include <vector>

#include "test_support.hpp"
#include "wheelhouse/catalog/catalog.hpp"
#include "wheelhouse/ingest/commit_queue.hpp"
#include "wheelhouse/sqlite/connection.hpp"

using namespace wheelhouse;
using wheelhouse::testing::temp_dir;

namespace {

std::unique_ptr<catalog::catalog> open_catalog(const temp_dir& dir) {
    auto opened = catalog::catalog::open(dir / "catalog.db");
    REQUIRE(opened);
    return std::move(opened).value();
}

storage::blob_store open_store(const temp_dir& dir) {
    auto opened = storage::blob_store::open(dir.path());
    REQUIRE(opened);
    return std::move(opened).value();
}

struct queue_fixture {
    temp_dir dir;
    std::unique_ptr<catalog::catalog> db = open_catalog(dir);
    storage::blob_store store = open_store(dir);

    queue_fixture() {
        REQUIRE(db->write_transaction([](sqlite::connection& writer) { return writer.execute("CREATE TABLE t (i INTEGER)"); }));
    }

    std::int64_t rows() const {
        auto reader = sqlite::connection::open(dir / "catalog.db", {.read_only = true});
        REQUIRE(reader);
        return *reader->query_int64("SELECT count(*) FROM t");
    }
};

ingest::queued_commit insert(int value, std::promise<result<void>>& outcome) {
    ingest::queued_commit commit;
    commit.write.work = [value](sqlite::connection& writer) -> result<std::string> {
        if (value < 0) return invalid("negative values are refused");
        if (auto done = writer.execute("INSERT INTO t VALUES (" + std::to_string(value) + ")"); !done) return done.error();
        return std::string();
    };
    commit.done = [&outcome](result<void> committed) { outcome.set_value(std::move(committed)); };
    return commit;
}

}  // namespace

TEST_CASE("commit_queue: writes that queue while a batch commits share the next commit, each with its outcome",
          "[commit_queue]") {
    queue_fixture data;
    ingest::commit_queue queue(*data.db, data.store);

    // The first batch holds the writer until the others are queued behind it.
    std::mutex mutex;
    std::condition_variable changed;
    bool entered = false, release = false;
    std::promise<result<void>> first_done;
    ingest::queued_commit first;
    first.write.work = [&](sqlite::connection&) -> result<std::string> {
        std::unique_lock lock(mutex);
        entered = true;
        changed.notify_all();
        changed.wait(lock, [&] { return release; });
        return std::string();
    };
    first.done = [&](result<void> committed) { first_done.set_value(std::move(committed)); };
    queue.submit(std::move(first));
    {
        std::unique_lock lock(mutex);
        changed.wait(lock, [&] { return entered; });
    }
    std::vector<std::promise<result<void>>> outcomes(5);
    for (int i = 0; i < 5; ++i) queue.submit(insert(i == 2 ? -1 : i, outcomes[static_cast<std::size_t>(i)]));
    {
        std::lock_guard lock(mutex);
        release = true;
    }
    changed.notify_all();

    CHECK(first_done.get_future().get());
    for (int i = 0; i < 5; ++i) {
        auto outcome = outcomes[static_cast<std::size_t>(i)].get_future().get();
        if (i == 2) {
            REQUIRE_FALSE(outcome);
            CHECK(outcome.error().message == "negative values are refused");
        } else {
            CHECK(outcome);
        }
    }
    queue.drain();
    CHECK(queue.batches() == 2);
    CHECK(queue.writes() == 6);
    CHECK(data.rows() == 4);
}

TEST_CASE("commit_queue: a batch waits for the writes announced before it opened, and only for them",
          "[commit_queue]") {
    queue_fixture data;
    // Long enough that only the arrival, never the deadline, can close the first batch.
    ingest::commit_queue queue(*data.db, data.store, {.capacity = 256, .max_wait = std::chrono::seconds(30)});
    std::promise<result<void>> a, b, c;
    {
        auto coming = queue.expect();  // b, queued for a worker
        queue.submit(insert(1, a));
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
        queue.submit(insert(2, b));
    }  // b has arrived
    CHECK(a.get_future().get());
    CHECK(b.get_future().get());
    CHECK(queue.batches() == 1);

    // Nothing announced: a lone write is committed at once, not after max_wait.
    const auto started = std::chrono::steady_clock::now();
    queue.submit(insert(3, c));
    CHECK(c.get_future().get());
    CHECK(std::chrono::steady_clock::now() - started < std::chrono::seconds(10));
    CHECK(queue.batches() == 2);
    CHECK(data.rows() == 3);
}

TEST_CASE("commit_queue: drain commits what is queued, a later submit starts it again", "[commit_queue]") {
    queue_fixture data;
    ingest::commit_queue queue(*data.db, data.store);
    std::promise<result<void>> a, b;
    queue.submit(insert(1, a));
    queue.drain();
    CHECK(a.get_future().wait_for(std::chrono::seconds(0)) == std::future_status::ready);
    queue.submit(insert(2, b));
    CHECK(b.get_future().get());
    CHECK(data.rows() == 2);
}

TEST_CASE("commit_queue: a full queue holds its submitters back until a batch takes what waits", "[commit_queue]") {
    queue_fixture data;
    ingest::commit_queue queue(*data.db, data.store, {.capacity = 1});
    std::mutex mutex;
    std::condition_variable changed;
    bool entered = false, release = false;
    ingest::queued_commit stalled;  // holds the writer, as a database locked by another process
    std::promise<result<void>> stalled_done, a, b;
    stalled.write.work = [&](sqlite::connection&) -> result<std::string> {
        std::unique_lock lock(mutex);
        entered = true;
        changed.notify_all();
        changed.wait(lock, [&] { return release; });
        return std::string();
    };
    stalled.done = [&](result<void> committed) { stalled_done.set_value(std::move(committed)); };
    queue.submit(std::move(stalled));
    {
        std::unique_lock lock(mutex);
        changed.wait(lock, [&] { return entered; });
    }
    queue.submit(insert(1, a));  // fills the queue
    std::atomic<bool> submitted{false};
    std::thread submitter([&] {
        queue.submit(insert(2, b));
        submitted = true;
    });
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    CHECK_FALSE(submitted);
    {
        std::lock_guard lock(mutex);
        release = true;
    }
    changed.notify_all();
    submitter.join();
    CHECK(stalled_done.get_future().get());
    CHECK(a.get_future().get());
    CHECK(b.get_future().get());
    CHECK(data.rows() == 2);
}
