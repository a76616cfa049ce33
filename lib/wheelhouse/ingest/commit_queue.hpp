#pragma once
// Group commit. Ingest jobs hand over rows whose files are in the blob store but not yet
// durable, and return; one thread takes whatever has queued meanwhile, makes the blob store
// durable with one sync, writes the rows in one transaction with one synced commit, and then
// tells each job its outcome. A sync is paid per batch, not per upload, and a worker never
// sits waiting for one while other uploads queue behind it.
//
// Thread safety: submit() from any thread. Completions run on the queue's thread, one after
// another: they must not block for long (answering an HTTP request, setting a promise).

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

#include "wheelhouse/catalog/catalog.hpp"
#include "wheelhouse/result.hpp"
#include "wheelhouse/storage/blob_store.hpp"

namespace wheelhouse::ingest {

struct commit_queue_options {
    // Writes waiting for a batch; submit() blocks past it, so a stalled commit (the database
    // locked by another process) holds the workers back and new uploads get 503 at their
    // headers, instead of piling up without bound.
    std::size_t capacity = 256;
    // How long a batch waits, at most, for the writes that were on their way when it opened.
    std::chrono::microseconds max_wait{2000};
};

struct queued_commit {
    catalog::batched_write write;
    bool syncs_blobs = false;  // it put files with storage::durability::at_sync
    // Told the write's outcome once its commit is synced (or failed).
    std::function<void(result<void>)> done;
};

class commit_queue {
public:
    // More than this many writes in one transaction would hold the write lock for long.
    static constexpr std::size_t max_batch = 256;

    // Says, when it dies, that an expected write has been submitted or will not come.
    class arrival {
    public:
        explicit arrival(commit_queue& queue) noexcept : queue_(&queue) {}
        arrival(arrival&& other) noexcept : queue_(std::exchange(other.queue_, nullptr)) {}
        arrival& operator=(arrival&&) = delete;
        arrival(const arrival&) = delete;
        arrival& operator=(const arrival&) = delete;
        ~arrival() {
            if (queue_ != nullptr) queue_->arrived();
        }

    private:
        commit_queue* queue_;
    };

    commit_queue(catalog::catalog& catalog, const storage::blob_store& store, commit_queue_options options = {}) noexcept
        : catalog_(catalog), store_(store), options_(options) {}
    commit_queue(const commit_queue&) = delete;
    commit_queue& operator=(const commit_queue&) = delete;
    ~commit_queue() { drain(); }

    // A write on its way (an upload queued for validation): a batch that opens before the
    // returned guard dies waits for it, up to max_wait, so uploads that finish close together
    // share a sync, while a lone upload is committed at once.
    [[nodiscard]] arrival expect();

    // Queues a write, waiting while the queue is at its capacity; the thread starts with the
    // first one.
    void submit(queued_commit commit);

    // Commits what is queued, tells its completions, and stops the thread (a later submit
    // starts it again). Thread safety: not while submit() may run, and not on the queue's thread.
    void drain();

    // Batches committed so far, and writes in them: batching at work shows as writes > batches.
    std::size_t batches() const;
    std::size_t writes() const;

private:
    void run();
    void arrived();
    void commit(std::vector<queued_commit>& batch);

    catalog::catalog& catalog_;
    const storage::blob_store& store_;
    const commit_queue_options options_;
    mutable std::mutex mutex_;  // guards everything below
    std::condition_variable queued_;
    std::condition_variable room_;
    std::deque<queued_commit> queue_;
    bool stopping_ = false;
    std::size_t expected_ = 0;  // arrivals announced by expect(), ever
    std::size_t arrived_ = 0;   // of those, the ones whose guard has died
    std::size_t batches_ = 0;
    std::size_t writes_ = 0;
    std::thread thread_;
};

}  // namespace wheelhouse::ingest
