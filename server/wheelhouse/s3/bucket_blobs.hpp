#pragma once
// The object store of a data folder's own files (storage::object_store) on an S3 bucket: the
// blob `sha256` is the object PREFIX + "blobs/sha256/ab/cd/<sha256>", the name it has under
// DATA/ (so `wheelhouse s3-push` fills the same keys). Each request is timed into /metrics;
// a failure is logged with the store's own words and given to the caller as
// error_kind::unavailable (503 with Retry-After), since a client can do nothing but retry.
// A store that did not answer (or answered 5xx) is not asked again for `rest_after_failure`:
// requests meanwhile fail at once, so uploads, deletions and the catalog writes queued behind
// them do not each wait out --s3-timeout against a store that is down.
//
// Thread safety: as object_client, any number of threads at once.

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>

#include "wheelhouse/metrics/server_metrics.hpp"
#include "wheelhouse/s3/object_client.hpp"
#include "wheelhouse/s3/part_upload.hpp"
#include "wheelhouse/storage/object_store.hpp"

namespace wheelhouse::s3 {

class bucket_blobs final : public storage::object_store {
public:
    // `metrics` may be null (a command line); else it outlives this.
    bucket_blobs(std::unique_ptr<object_client> client, metrics::server_metrics* metrics) noexcept
        : client_(std::move(client)), metrics_(metrics) {}

    std::string describe() const override;
    result<void> put(std::string_view sha256, const std::filesystem::path& file,
                     const storage::part_digests* written) override;
    std::uint64_t part_size_for(std::uint64_t most_bytes) const override;
    // A multipart upload on a thread of its own (s3/part_upload.hpp), at most two at once; null
    // while the store rests after a failure.
    std::unique_ptr<storage::growing_put> put_as_written(std::string_view sha256, const std::filesystem::path& file,
                                                         std::uint64_t most_bytes) override;
    result<std::optional<storage::stored_object>> look_up(std::string_view sha256) override;
    result<storage::file_digest> copy_out(std::string_view sha256, std::uint64_t size,
                                          const std::filesystem::path& target, unsigned mode) override;
    result<void> remove(std::string_view sha256) override;
    result<void> forget_unfinished(std::string_view sha256) override;
    result<void> list(const std::function<result<void>(std::string_view sha256, std::uint64_t size)>& each) override;
    // Signed at the start of the current tenth of `expires` and kept until its end, so the
    // URL a client gets works for 90 to 100% of `expires` and costs a map lookup, not a signature.
    std::string download_url(std::string_view sha256, std::chrono::seconds expires) const override;

    object_client& client() noexcept { return *client_; }
    // Where requests are timed from now on. Thread safety: before the server starts.
    void record_into(metrics::server_metrics* metrics) noexcept { metrics_ = metrics; }
    // A server's clients hear of failures from now on: they are logged, and said without the
    // store's details. (A command tells its operator the store's own words, fix first.)
    // Thread safety: before the server starts.
    void answer_clients() noexcept { answers_clients_ = true; }

private:
    class measured_put;
    std::string key_of(std::string_view sha256) const;
    // Times `call` into the operation's series; for a server's clients, a failure is logged and
    // made unavailable.
    template <class Call>
    auto measured(metrics::store_operation operation, std::string_view sha256, Call&& call);

    static constexpr std::chrono::seconds rest_after_failure{5};

    std::unique_ptr<object_client> client_;
    background_uploads uploads_as_written_{2};  // after client_, so its threads end first
    metrics::server_metrics* metrics_;
    bool answers_clients_ = false;
    std::atomic<std::int64_t> resting_until_ms_{0};  // steady clock; 0: the store is asked

    // The URLs download_url signed in the current window, by sha256; at most urls_kept of
    // them, so a walk over every file in the index holds a few MiB at most.
    static constexpr std::size_t urls_kept = 4096;
    mutable std::mutex urls_mutex_;
    mutable std::chrono::system_clock::time_point urls_signed_at_;
    mutable std::chrono::seconds urls_expire_{0};
    struct sha256_hash {  // looked up by the request's string_view, without a copy
        using is_transparent = void;
        std::size_t operator()(std::string_view sha256) const noexcept { return std::hash<std::string_view>{}(sha256); }
    };
    mutable std::unordered_map<std::string, std::string, sha256_hash, std::equal_to<>> urls_;
};

}  // namespace wheelhouse::s3
