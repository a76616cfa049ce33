#pragma once
// A multipart upload of one key from one file, which may still be growing (an upload's spool as
// its body arrives). Parts are cut at part_size once their bytes are in the file and sent
// parts_at_once at a time on connections of their own, each with its sha256 signed so the store
// refuses a part whose bytes differ. That sha256 is either the writer's, taken as the bytes arrived
// (it has checked the whole file against the key's sha256 itself), or taken here, reading the
// file once in order and hashing the whole file too. The upload is completed only when told to
// (complete()) and, when read here, the whole file hashes to the key's sha256; otherwise, or on
// any failure, it is aborted and leaves no object.
//
// Thread safety: part_hashed(), grew_to(), ended(), complete() and abandon() from any thread at
// any time, never blocking on the network; run() on one thread, once.

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "wheelhouse/crypto/hasher.hpp"
#include "wheelhouse/result.hpp"
#include "wheelhouse/s3/object_client.hpp"
#include "wheelhouse/storage/object_store.hpp"

namespace wheelhouse::s3 {

// Whole MiB, at least 8 MiB (S3 takes parts of 5 MiB and more, but the last), few enough that a
// file of `most_bytes` needs no more than S3's 10,000 parts.
std::uint64_t part_size_for(std::uint64_t most_bytes);
// S3 takes no larger part (nor an object over 10,000 of them).
inline constexpr std::uint64_t largest_part = 5ull << 30;

class part_upload {
public:
    // Each part read and hashed here.
    part_upload(object_client& client, std::string key, std::filesystem::path file, std::string sha256,
                std::uint64_t part_size);
    // Each part as `written` cuts the file, signed with its digest there or, for those it lacks,
    // the one part_hashed() tells; the file is never read but to send it.
    part_upload(object_client& client, std::string key, std::filesystem::path file, std::string sha256,
                storage::part_digests written);

    // The next part the writer has not told of hashes to `sha256` (it tells before its end is in).
    void part_hashed(std::string sha256) noexcept;
    // The file holds `size` bytes now.
    void grew_to(std::uint64_t size) noexcept;
    // The file is whole at its last size.
    void ended() noexcept;
    // Once every part is stored: complete the upload (complete()), or abort it (abandon(), which
    // also stops sending parts). run() waits for one of them. `settled` hears what the upload left
    // once run() has ended (at once if it has).
    void complete() noexcept;
    void abandon(std::function<void(storage::leftovers)> settled = {}) noexcept;

    // Begins the upload, sends each part as its bytes arrive, then completes or aborts it. Blocks.
    result<put_answer> run();
    // What an upload that did not complete left, once run() has ended.
    storage::leftovers left() noexcept;

private:
    struct part;
    // The next part once its bytes are in the file (or the file ended); nullopt when there is
    // none, or the upload stops.
    std::optional<part> next_part(unsigned number);
    // The part read from `in` and hashed (with `whole`), or nullopt when the file was short.
    std::optional<file_part> read_part(const part& next, int in, crypto::hasher& whole, std::vector<char>& block);
    result<put_answer> send_all(const std::string& upload_id);
    void fail(result<put_answer> why);
    // run() has ended, leaving `left`: tells abandon()'s listener.
    void settle(storage::leftovers left) noexcept;

    object_client& client_;
    const std::string key_;
    const std::filesystem::path file_;
    const std::string sha256_;
    const std::uint64_t part_size_;
    const bool hashed_by_writer_;

    std::mutex guard_;
    std::condition_variable changed_;
    std::uint64_t available_ = 0;
    bool ended_ = false;
    enum class decision { none, complete, abandon } decided_ = decision::none;
    std::optional<result<put_answer>> failure_;
    std::vector<std::string> etags_;  // by part number, as the store gave them
    std::vector<std::string> written_;  // the writer's digests, by part number
    bool ran_ = false;
    storage::leftovers left_ = storage::leftovers::none;
    std::function<void(storage::leftovers)> settled_;
};

// The threads that run part_uploads while their files are written: at most `most` at once.
// A thread no one waits for any more is handed back with let_go() and joined here once it ends,
// so an I/O thread dropping an upload never waits. Each is joined before this dies (its upload
// aborting, every step bounded by s3-timeout); whoever holds one must drop it first.
class background_uploads {
public:
    struct thread {
        std::thread running;
        std::shared_ptr<std::atomic<bool>> ended;
    };

    explicit background_uploads(unsigned most) noexcept : most_(most) {}
    ~background_uploads();
    background_uploads(const background_uploads&) = delete;
    background_uploads& operator=(const background_uploads&) = delete;

    // A thread running `work`, or nullopt when `most` already run.
    std::optional<thread> start(std::function<void()> work);
    void let_go(thread leaving);

private:
    const unsigned most_;
    std::mutex guard_;
    unsigned running_ = 0;
    std::vector<thread> leaving_;
};

// `upload` run on a thread from `threads` while its file is written, as storage::growing_put
// (s3::bucket_blobs): finish() completes it and waits; dropped unfinished, it is abandoned.
// Null when `threads` has none free.
std::unique_ptr<storage::growing_put> upload_as_written(background_uploads& threads,
                                                        std::shared_ptr<part_upload> upload);

}  // namespace wheelhouse::s3
