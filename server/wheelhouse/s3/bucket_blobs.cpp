#include "wheelhouse/s3/bucket_blobs.hpp"

#include <algorithm>

#include <spdlog/spdlog.h>

#include "wheelhouse/storage/blob_path.hpp"

namespace wheelhouse::s3 {

std::string bucket_blobs::describe() const {
    const auto& settings = client_->settings();
    return "s3://" + settings.bucket + "/" + settings.prefix + " at " + settings.endpoint;
}

std::string bucket_blobs::key_of(std::string_view sha256) const {
    return client_->key_of(storage::relative_blob_path(sha256));
}

namespace {

std::int64_t steady_ms(std::chrono::steady_clock::time_point when) {
    return std::chrono::duration_cast<std::chrono::milliseconds>(when.time_since_epoch()).count();
}

}  // namespace

template <class Call>
auto bucket_blobs::measured(metrics::store_operation operation, std::string_view sha256, Call&& call) {
    const auto started = std::chrono::steady_clock::now();
    using answer_type = decltype(call(key_of(sha256)));
    if (steady_ms(started) < resting_until_ms_.load(std::memory_order_relaxed)) {
        if (metrics_ != nullptr) metrics_->record_store(operation, true, std::chrono::microseconds(0));
        return answer_type(make_error(error_kind::unavailable,
                                      "try again shortly: the object store holding this index's files is not "
                                      "answering (the administrator has the details in the log)"));
    }
    auto answer = call(key_of(sha256));
    if (!answer && (answer.error().kind == error_kind::unavailable || answer.error().kind == error_kind::timeout)) {
        resting_until_ms_.store(steady_ms(std::chrono::steady_clock::now() + rest_after_failure),
                                std::memory_order_relaxed);
    }
    if (metrics_ != nullptr) {
        metrics_->record_store(operation, !answer, std::chrono::duration_cast<std::chrono::microseconds>(
                                                       std::chrono::steady_clock::now() - started));
    }
    if (!answer && answers_clients_ && answer.error().kind != error_kind::internal) {
        spdlog::error("object store {}: {}", describe(), answer.error().message);
        return answer_type(make_error(error_kind::unavailable,
                                           "try again shortly: the object store holding this index's files did not "
                                           "do what was asked (the administrator has the details in the log)"));
    }
    return answer;
}

result<void> bucket_blobs::put(std::string_view sha256, const std::filesystem::path& file,
                               const storage::part_digests* written) {
    return measured(metrics::store_operation::put, sha256,
                    [&](const std::string& key) { return client_->put_file(key, file, sha256, written); });
}

// 0 for a limit past what S3 holds (10,000 parts of 5 GiB): a file is then cut by its own size,
// once whole, and its parts hashed as they are read.
std::uint64_t bucket_blobs::part_size_for(std::uint64_t most_bytes) const {
    const auto size = s3::part_size_for(most_bytes);
    return size <= largest_part ? size : 0;
}

// Its finish() timed and its failure told as every other request's.
class bucket_blobs::measured_put final : public storage::growing_put {
public:
    measured_put(bucket_blobs& blobs, std::string sha256, std::unique_ptr<storage::growing_put> upload)
        : blobs_(blobs), sha256_(std::move(sha256)), upload_(std::move(upload)) {}
    void part_hashed(std::string sha256) noexcept override { upload_->part_hashed(std::move(sha256)); }
    void grew_to(std::uint64_t size) noexcept override { upload_->grew_to(size); }
    void ended() noexcept override { upload_->ended(); }
    storage::leftovers left() const noexcept override { return upload_->left(); }
    void abandon(std::function<void(storage::leftovers)> settled) noexcept override {
        upload_->abandon(std::move(settled));
    }
    result<void> finish() override {
        return blobs_.measured(metrics::store_operation::put, sha256_, [&](const std::string&) { return upload_->finish(); });
    }

private:
    bucket_blobs& blobs_;
    std::string sha256_;
    std::unique_ptr<storage::growing_put> upload_;
};

std::unique_ptr<storage::growing_put> bucket_blobs::put_as_written(std::string_view sha256,
                                                                  const std::filesystem::path& file,
                                                                  std::uint64_t most_bytes) {
    if (steady_ms(std::chrono::steady_clock::now()) < resting_until_ms_.load(std::memory_order_relaxed)) return nullptr;
    if (part_size_for(most_bytes) == 0) return nullptr;
    // The writer (the upload's spool) hashes each part as it arrives: part_hashed().
    auto upload = std::make_shared<part_upload>(*client_, key_of(sha256), file, std::string(sha256),
                                                storage::part_digests{part_size_for(most_bytes), {}});
    auto running = upload_as_written(uploads_as_written_, std::move(upload));
    if (!running) return nullptr;
    return std::make_unique<measured_put>(*this, std::string(sha256), std::move(running));
}

result<std::optional<storage::stored_object>> bucket_blobs::look_up(std::string_view sha256) {
    return measured(metrics::store_operation::look_up, sha256,
                    [&](const std::string& key) -> result<std::optional<storage::stored_object>> {
                        auto found = client_->look_up(key);
                        if (!found) return found.error();
                        if (!*found) return std::optional<storage::stored_object>();
                        return std::optional(storage::stored_object{(*found)->size, std::move((*found)->sha256)});
                    });
}

result<storage::file_digest> bucket_blobs::copy_out(std::string_view sha256, std::uint64_t size,
                                                    const std::filesystem::path& target, unsigned mode) {
    auto there = look_up(sha256);  // an absent object is "missing", not a failing store
    if (!there) return there.error();
    if (!*there) return make_error(error_kind::not_found, "the bucket has no object " + key_of(sha256));
    if ((*there)->size != size) {
        return make_error(error_kind::conflict, "the bucket's object " + key_of(sha256) + " is " +
                                                    std::to_string((*there)->size) + " bytes, not " + std::to_string(size));
    }
    return measured(metrics::store_operation::get, sha256, [&](const std::string& key) -> result<storage::file_digest> {
        if (auto got = client_->get_file(key, target, size, mode); !got) return got.error();
        auto digest = storage::hash_file(target);
        if (!digest) return make_error(error_kind::internal, digest.error().message);
        return digest;
    });
}

result<void> bucket_blobs::remove(std::string_view sha256) {
    return measured(metrics::store_operation::remove, sha256, [&](const std::string& key) -> result<void> {
        if (auto removed = client_->remove(key); !removed) return removed;
        // The blob's object is gone; so are the parts of an upload of it a killed run began.
        return client_->abort_uploads(key);
    });
}

result<void> bucket_blobs::forget_unfinished(std::string_view sha256) {
    return measured(metrics::store_operation::remove, sha256,
                    [&](const std::string& key) { return client_->abort_uploads(key); });
}

result<void> bucket_blobs::list(const std::function<result<void>(std::string_view sha256, std::uint64_t size)>& each) {
    const std::string prefix = client_->settings().prefix;
    return client_->list(prefix + "blobs/sha256/", [&](const listed_object& object) -> result<void> {
        const auto parts = storage::parse_blob_path(std::string_view(object.key).substr(prefix.size()));
        if (!parts || parts->metadata) return {};
        return each(parts->sha256, object.size);
    });
}

std::string bucket_blobs::download_url(std::string_view sha256, std::chrono::seconds expires) const {
    using namespace std::chrono;
    const auto window = std::max<seconds::rep>(1, expires.count() / 10);
    const auto now = duration_cast<seconds>(system_clock::now().time_since_epoch()).count();
    const system_clock::time_point signed_at{seconds(now - now % window)};
    {
        const std::lock_guard lock(urls_mutex_);
        if (urls_signed_at_ == signed_at && urls_expire_ == expires) {
            if (const auto kept = urls_.find(sha256); kept != urls_.end()) return kept->second;
        }
    }
    std::string url = client_->presigned_get(key_of(sha256), expires, signed_at);
    const std::lock_guard lock(urls_mutex_);
    if (signed_at > urls_signed_at_ || urls_expire_ != expires || urls_.size() >= urls_kept) {
        urls_.clear();
        urls_signed_at_ = signed_at;
        urls_expire_ = expires;
    }
    // A thread that read the clock before the window turned keeps its URL to itself.
    if (signed_at == urls_signed_at_) urls_.emplace(std::string(sha256), url);
    return url;
}

}  // namespace wheelhouse::s3
