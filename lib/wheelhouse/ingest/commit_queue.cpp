#include "wheelhouse/ingest/commit_queue.hpp"

#include <algorithm>
#include <utility>

namespace wheelhouse::ingest {

commit_queue::arrival commit_queue::expect() {
    std::lock_guard lock(mutex_);
    ++expected_;
    return arrival(*this);
}

void commit_queue::arrived() {
    {
        std::lock_guard lock(mutex_);
        ++arrived_;
    }
    queued_.notify_one();
}

void commit_queue::submit(queued_commit commit) {
    {
        std::unique_lock lock(mutex_);
        room_.wait(lock, [this] { return queue_.size() < std::max<std::size_t>(options_.capacity, 1); });
        queue_.push_back(std::move(commit));
        if (!thread_.joinable()) thread_ = std::thread([this] { run(); });
    }
    queued_.notify_one();
}

void commit_queue::drain() {
    {
        std::lock_guard lock(mutex_);
        stopping_ = true;
    }
    queued_.notify_one();
    if (thread_.joinable()) thread_.join();
    std::lock_guard lock(mutex_);
    stopping_ = false;
}

std::size_t commit_queue::batches() const {
    std::lock_guard lock(mutex_);
    return batches_;
}

std::size_t commit_queue::writes() const {
    std::lock_guard lock(mutex_);
    return writes_;
}

void commit_queue::run() {
    std::vector<queued_commit> batch;
    for (;;) {
        {
            std::unique_lock lock(mutex_);
            queued_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
            if (queue_.empty()) return;  // stopping, and everything committed
            // What queued while the last batch synced is in this one, and so are the uploads
            // being validated right now, when they come soon: a sync shared by more uploads.
            const auto awaited = expected_;
            queued_.wait_for(lock, options_.max_wait, [&] {
                return stopping_ || arrived_ >= awaited || queue_.size() >= max_batch;
            });
            const auto count = std::min(queue_.size(), max_batch);
            batch.assign(std::make_move_iterator(queue_.begin()), std::make_move_iterator(queue_.begin() + count));
            queue_.erase(queue_.begin(), queue_.begin() + count);
            ++batches_;
            writes_ += count;
        }
        room_.notify_all();
        commit(batch);
        batch.clear();  // the writes' captures (spool files, claims) go before the next wait
    }
}

void commit_queue::commit(std::vector<queued_commit>& batch) {
    // Rows are written only once the files they name are durable; a failed sync fails just
    // the writes that needed it.
    result<void> synced;
    if (std::any_of(batch.begin(), batch.end(), [](const queued_commit& c) { return c.syncs_blobs; })) {
        synced = store_.sync();
    }
    std::vector<catalog::batched_write> writes;
    std::vector<std::size_t> written;  // their places in `batch`
    std::vector<result<void>> outcomes(batch.size());
    for (std::size_t i = 0; i < batch.size(); ++i) {
        if (batch[i].syncs_blobs && !synced) {
            outcomes[i] = synced.error();
            continue;
        }
        writes.push_back(std::move(batch[i].write));
        written.push_back(i);
    }
    auto committed = catalog_.write_batch(writes);
    for (std::size_t i = 0; i < written.size(); ++i) outcomes[written[i]] = std::move(committed[i]);
    for (std::size_t i = 0; i < batch.size(); ++i) {
        try {
            batch[i].done(std::move(outcomes[i]));
        } catch (...) {
            // One completion that throws (out of memory) must not cost the others theirs.
        }
    }
}

}  // namespace wheelhouse::ingest
