#include "wheelhouse/s3/part_upload.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <deque>
#include <system_error>
#include <vector>

#include "wheelhouse/crypto/hasher.hpp"
#include "wheelhouse/storage/descriptor.hpp"

namespace wheelhouse::s3 {
namespace {

// Parts on the wire at once: one connection does not use what a store can take.
constexpr unsigned parts_at_once = 4;
constexpr std::uint64_t smallest_part = 8ull << 20;
constexpr std::uint64_t most_parts = 10000;

error stopped() { return make_error(error_kind::internal, "the upload was abandoned"); }

}  // namespace

std::uint64_t part_size_for(std::uint64_t most_bytes) {
    constexpr std::uint64_t mib = 1 << 20;
    const std::uint64_t needed = (most_bytes + most_parts - 1) / most_parts;
    return std::max(smallest_part, (needed + mib - 1) / mib * mib);
}

struct part_upload::part {
    unsigned number = 0;
    std::uint64_t offset = 0;
    std::uint64_t length = 0;
    std::string sha256;  // the writer's, when it hashes the parts
};

part_upload::part_upload(object_client& client, std::string key, std::filesystem::path file, std::string sha256,
                         std::uint64_t part_size)
    : client_(client), key_(std::move(key)), file_(std::move(file)), sha256_(std::move(sha256)),
      part_size_(part_size), hashed_by_writer_(false) {}

part_upload::part_upload(object_client& client, std::string key, std::filesystem::path file, std::string sha256,
                         storage::part_digests written)
    : client_(client), key_(std::move(key)), file_(std::move(file)), sha256_(std::move(sha256)),
      part_size_(written.part_size), hashed_by_writer_(true), written_(std::move(written.sha256)) {}

void part_upload::part_hashed(std::string sha256) noexcept {
    std::lock_guard lock(guard_);
    written_.push_back(std::move(sha256));
}

void part_upload::grew_to(std::uint64_t size) noexcept {
    std::lock_guard lock(guard_);
    const bool new_part = size / part_size_ != available_ / part_size_;
    available_ = std::max(available_, size);
    if (new_part) changed_.notify_all();  // the writer's thread pays a wake-up a part, not a write
}

void part_upload::ended() noexcept {
    std::lock_guard lock(guard_);
    ended_ = true;
    changed_.notify_all();
}

void part_upload::complete() noexcept {
    std::lock_guard lock(guard_);
    if (decided_ == decision::none) decided_ = decision::complete;
    changed_.notify_all();
}

void part_upload::abandon(std::function<void(storage::leftovers)> settled) noexcept {
    std::unique_lock lock(guard_);
    if (decided_ == decision::none) decided_ = decision::abandon;
    changed_.notify_all();
    if (!ran_) {
        settled_ = std::move(settled);
        return;
    }
    const auto left = left_;
    lock.unlock();
    if (settled) settled(left);
}

storage::leftovers part_upload::left() noexcept {
    std::lock_guard lock(guard_);
    return left_;
}

void part_upload::settle(storage::leftovers left) noexcept {
    std::unique_lock lock(guard_);
    ran_ = true;
    left_ = left;
    auto settled = std::move(settled_);
    lock.unlock();
    if (settled) settled(left);
}

void part_upload::fail(result<put_answer> why) {
    std::lock_guard lock(guard_);
    if (!failure_) failure_ = std::move(why);
    changed_.notify_all();
}

std::optional<part_upload::part> part_upload::next_part(unsigned number) {
    const std::uint64_t offset = std::uint64_t{number - 1} * part_size_;
    std::unique_lock lock(guard_);
    changed_.wait(lock, [&] {
        return failure_ || decided_ == decision::abandon || ended_ || available_ >= offset + part_size_;
    });
    if (failure_ || decided_ == decision::abandon || available_ <= offset) return std::nullopt;
    part next{number, offset, std::min(part_size_, available_ - offset), {}};
    if (hashed_by_writer_) {
        if (written_.size() < number) {  // never sent unsigned: the writer broke its word
            failure_ = make_error(error_kind::internal, "part " + std::to_string(number) + " of " + file_.string() +
                                                            " was written without its digest");
            return std::nullopt;
        }
        next.sha256 = written_[number - 1];
    }
    return next;
}

result<put_answer> part_upload::run() {
    using storage::leftovers;
    std::string upload_id;
    auto sent = client_.begin_parts(key_, sha256_, upload_id);
    if (!sent || sent->refusal) {
        // A begin whose answer was lost may have begun an upload, but one without a part holds
        // no byte: not worth a claim left until the next start.
        settle(leftovers::none);
        return sent;
    }
    sent = send_all(upload_id);
    bool completing = false;
    if (sent && !sent->refusal) {
        std::unique_lock lock(guard_);
        changed_.wait(lock, [&] { return decided_ != decision::none; });
        completing = decided_ == decision::complete;
        lock.unlock();
        sent = completing ? client_.complete_parts(key_, upload_id, etags_) : result<put_answer>(stopped());
    }
    if (sent && !sent->refusal) {
        settle(leftovers::none);
        return sent;
    }
    const bool aborted = client_.abort_parts(key_, upload_id);
    // Asked to complete, the store may have made the object however it answered.
    settle(completing ? leftovers::blob : aborted ? leftovers::none : leftovers::pieces);
    return sent;
}

std::optional<file_part> part_upload::read_part(const part& next, int in, crypto::hasher& whole,
                                               std::vector<char>& block) {
    auto hasher = crypto::hasher::create(crypto::hash_algorithm::sha256);
    if (!hasher) return std::nullopt;
    std::uint64_t at = next.offset;
    for (const std::uint64_t end = next.offset + next.length; at < end;) {
        const auto got = ::pread(in, block.data(), std::min<std::uint64_t>(end - at, block.size()), static_cast<off_t>(at));
        if (got < 0 && errno == EINTR) continue;
        if (got <= 0) return std::nullopt;  // shorter than it was said to be: never send a part short
        const std::string_view bytes(block.data(), static_cast<std::size_t>(got));
        hasher->update(bytes);
        whole.update(bytes);
        at += static_cast<std::uint64_t>(got);
    }
    return file_part{file_, next.number, next.offset, next.length, hasher->finish_hex()};
}

// The parts go out parts_at_once at a time while the next are cut. Read here, the file is read
// once in order, each part hashed with the whole file, whose sha256 is checked before the upload
// may complete: the store checks each part only against what was read. Hashed by the writer as
// the bytes arrived, a part is not read but by its sender, and the store checks it against what
// arrived.
result<put_answer> part_upload::send_all(const std::string& upload_id) {
    std::deque<file_part> ready;
    bool planned_all = false;
    const auto sender = [&] {
        for (;;) {
            std::unique_lock lock(guard_);
            changed_.wait(lock, [&] { return failure_ || decided_ == decision::abandon || !ready.empty() || planned_all; });
            if (failure_ || decided_ == decision::abandon || ready.empty()) return;
            file_part piece = std::move(ready.front());
            ready.pop_front();
            lock.unlock();
            std::string etag;
            auto put = client_.put_part(key_, upload_id, piece, etag);
            if (!put || put->refusal) return fail(std::move(put));
            lock.lock();
            etags_[piece.number - 1] = std::move(etag);
        }
    };
    std::vector<std::thread> senders;
    try {
        for (unsigned i = 0; i < parts_at_once; ++i) senders.emplace_back(sender);
    } catch (const std::system_error& no_thread) {
        fail(make_error(error_kind::unavailable, std::string("the server cannot start a thread: ") + no_thread.what()));
    }

    const auto unreadable = [&] { return make_error(error_kind::internal, "cannot read " + file_.string()); };
    std::optional<crypto::hasher> whole;  // of what is read here
    storage::descriptor in;
    std::vector<char> block;
    if (!hashed_by_writer_) {
        auto hasher = crypto::hasher::create(crypto::hash_algorithm::sha256);
        in = storage::descriptor{::open(file_.c_str(), O_RDONLY | O_CLOEXEC)};
        if (hasher && in) whole.emplace(std::move(*hasher));
        else fail(unreadable());  // next_part() then gives none
        block.resize(1 << 20);
    }
    for (unsigned number = 1;; ++number) {
        auto next = next_part(number);
        if (!next) break;
        auto piece = whole ? read_part(*next, in.get(), *whole, block)
                           : std::optional(file_part{file_, number, next->offset, next->length, next->sha256});
        if (!piece) {
            fail(unreadable());
            break;
        }
        std::lock_guard lock(guard_);
        etags_.resize(number);
        ready.push_back(std::move(*piece));
        changed_.notify_all();
    }
    {
        std::lock_guard lock(guard_);
        const bool read_all = !failure_ && decided_ != decision::abandon;
        const bool other_bytes = whole && whole->finish_hex() != sha256_;
        if (read_all && (other_bytes || etags_.empty())) {
            failure_ = put_answer{400, "BadDigest", make_error(error_kind::upstream, "the bytes of " + file_.string() +
                                                                                     " do not hash to " + sha256_)};
        }
        planned_all = true;
        changed_.notify_all();
    }
    for (auto& thread : senders) thread.join();
    std::lock_guard lock(guard_);
    if (failure_) return std::move(*failure_);
    if (decided_ == decision::abandon) return stopped();
    return put_answer{200, {}, std::nullopt};
}

std::optional<background_uploads::thread> background_uploads::start(std::function<void()> work) {
    {
        std::lock_guard lock(guard_);
        if (running_ >= most_) return std::nullopt;
        ++running_;
    }
    auto ended = std::make_shared<std::atomic<bool>>(false);
    try {
        std::thread running([this, ended, work = std::move(work)] {
            work();
            std::lock_guard lock(guard_);
            --running_;
            ended->store(true);
        });
        return thread{std::move(running), std::move(ended)};
    } catch (const std::system_error&) {
        std::lock_guard lock(guard_);
        --running_;
        return std::nullopt;
    }
}

void background_uploads::let_go(thread leaving) {
    std::lock_guard lock(guard_);
    // An ended thread set its flag under this lock as its last step: joining it waits for nothing.
    std::erase_if(leaving_, [](thread& gone) {
        if (!gone.ended->load()) return false;
        gone.running.join();
        return true;
    });
    leaving_.push_back(std::move(leaving));
}

background_uploads::~background_uploads() {
    for (auto& leaving : leaving_) leaving.running.join();
}

namespace {

class upload_in_background final : public storage::growing_put {
public:
    upload_in_background(background_uploads& threads, std::shared_ptr<part_upload> upload,
                         std::shared_ptr<std::optional<result<put_answer>>> outcome, background_uploads::thread running)
        : threads_(threads), upload_(std::move(upload)), outcome_(std::move(outcome)), running_(std::move(running)) {}
    ~upload_in_background() override { abandon({}); }
    upload_in_background(const upload_in_background&) = delete;
    upload_in_background& operator=(const upload_in_background&) = delete;

    void part_hashed(std::string sha256) noexcept override { upload_->part_hashed(std::move(sha256)); }
    void grew_to(std::uint64_t size) noexcept override { upload_->grew_to(size); }
    void ended() noexcept override { upload_->ended(); }
    storage::leftovers left() const noexcept override { return upload_->left(); }
    void abandon(std::function<void(storage::leftovers)> settled) noexcept override {
        if (!running_.running.joinable()) return;
        upload_->abandon(std::move(settled));
        threads_.let_go(std::move(running_));
    }
    result<void> finish() override {
        if (!running_.running.joinable()) return stopped();
        upload_->complete();
        running_.running.join();
        auto answer = std::move(**outcome_);
        if (!answer) return answer.error();
        if (answer->refusal) return *answer->refusal;
        return {};
    }

private:
    background_uploads& threads_;
    std::shared_ptr<part_upload> upload_;
    std::shared_ptr<std::optional<result<put_answer>>> outcome_;
    background_uploads::thread running_;
};

}  // namespace

std::unique_ptr<storage::growing_put> upload_as_written(background_uploads& threads,
                                                        std::shared_ptr<part_upload> upload) {
    auto outcome = std::make_shared<std::optional<result<put_answer>>>();
    auto running = threads.start([upload, outcome] { *outcome = upload->run(); });
    if (!running) return nullptr;
    return std::make_unique<upload_in_background>(threads, std::move(upload), std::move(outcome), std::move(*running));
}

}  // namespace wheelhouse::s3
