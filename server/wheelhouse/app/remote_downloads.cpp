#include "wheelhouse/app/remote_downloads.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <charconv>
#include <cstring>

#include <spdlog/spdlog.h>

#include "wheelhouse/app/answers.hpp"
#include "wheelhouse/app/download_answer.hpp"
#include "wheelhouse/crypto/hasher.hpp"
#include "wheelhouse/remote/github_api.hpp"
#include "wheelhouse/remote/http_client.hpp"
#include "wheelhouse/storage/blob_store.hpp"
#include "wheelhouse/storage/descriptor.hpp"
#include "wheelhouse/transport/relay_body.hpp"
#include "wheelhouse/transport/responses.hpp"

namespace wheelhouse::app {
namespace {

using transport::make_text_response;

constexpr std::size_t batch_bytes = 256 * 1024;
constexpr std::chrono::milliseconds batch_delay{100};

std::optional<std::uint64_t> parse_number(std::string_view text) {
    std::uint64_t value = 0;
    const auto* end = text.data() + text.size();
    const auto [stop, failure] = std::from_chars(text.data(), end, value);
    if (failure != std::errc{} || stop != end || text.empty()) return std::nullopt;
    return value;
}

transport::outgoing_response upstream_failure(const http::request_header<>& request, const error& failure) {
    // The client's deadlines are error_kind::timeout (504); a URL the host policy refuses
    // (invalid) is the remote side's fault here, not the client's: 502 like any upstream failure.
    const auto status =
        failure.kind == error_kind::invalid ? http::status::bad_gateway : transport::status_for(failure.kind);
    return make_text_response(request, status, "the remote host holding this file failed: " + failure.message);
}

// 503 with Retry-After, as every unavailable answer (answers.hpp).
transport::outgoing_response busy(const http::request_header<>& request, std::string message) {
    return error_response(request, make_error(error_kind::unavailable, std::move(message)));
}

// What the remote host's headers promise, once checked against the catalog.
struct head_plan {
    bool whole = true;            // the whole file (200), else the range asked for (206)
    std::uint64_t length = 0;     // body bytes to expect
};

// What one transfer has seen of the remote host's answer so far.
struct relay_progress {
    head_plan plan;
    bool head_sent = false;
    std::optional<error> refusal;  // why the remote host's head was not relayed
    std::uint64_t received = 0;
    std::optional<crypto::hasher> digest;
    std::optional<storage::spool_file> spool;  // cache mode: the copy being written
    storage::descriptor spool_file;
    // Bytes go to the client in batches (a TLS record's worth each would cost a wake-up apiece).
    // The last batch waits until the digest is known: the client's Content-Length is reached
    // only with it, so a mismatch ends the connection short of a complete response.
    std::string batch;
    std::string held;
    std::chrono::steady_clock::time_point last_push = std::chrono::steady_clock::now();
};

}  // namespace

struct remote_downloads::transfer {
    catalog::file_record file;
    http::request_header<> request;  // a copy: the session's is gone once it has handed it over
    transport::responder respond;
    std::shared_ptr<transport::relay_body> body;
    // The client's hang-up (body->cancel()) stops the upstream read at once through this.
    std::shared_ptr<remote::fetch_cancellation> cancellation = std::make_shared<remote::fetch_cancellation>();
    std::optional<http_conditional::byte_range> range;  // what the client asked for, checked against file.size
    bool keep_copy = false;                             // cache mode: keep the verified whole file
    std::function<void()> kept;                         // told once it is kept
    bool private_index = false;
    bool own_store = false;    // the file is the index's own, in its bucket: a failure there is 503, and private
    std::string github_token;  // from the settings, for a file read through GitHub's API (file.fetch_url)

    // The URL for messages and logs: a bucket's presigned one without its query, which signs it.
    std::string shown_url() const {
        return own_store ? file.remote_url->substr(0, file.remote_url->find('?')) : *file.remote_url;
    }
    // Checks the remote host's status and headers against the catalog; refusals become 502.
    result<head_plan> check_head(const remote::fetch_response& head) const;
    transport::outgoing_response streamed_response(const head_plan& plan) const;
    // Upstream failures (before or after the head) are counted in `metrics`.
    void run(remote::http_client& client, const storage::blob_store& blobs, metrics::server_metrics& metrics);

private:
    remote::fetch_request upstream_request() const;
    result<void> on_head(relay_progress& progress, const remote::fetch_response& head,
                         const storage::blob_store& blobs) const;
    result<void> on_bytes(relay_progress& progress, std::span<const char> bytes) const;
    // Hashes the bytes and writes them to the copy being kept.
    void absorb(relay_progress& progress, std::string_view bytes) const;
    // Sends the batch held back so far and holds back the current one in its place.
    result<void> push_batch(relay_progress& progress) const;
    // After the body: checks length and digest, sends the held bytes, keeps the cached copy.
    void finish(relay_progress& progress, const result<remote::fetch_response>& fetched,
                const storage::blob_store& blobs, metrics::server_metrics& metrics) const;
    bool whole_and_verified(relay_progress& progress, metrics::server_metrics& metrics) const;
    void keep_verified_copy(relay_progress& progress, const storage::blob_store& blobs) const;
};

result<head_plan> remote_downloads::transfer::check_head(const remote::fetch_response& head) const {
    // The catalog's URL, not the storage host's: a signed URL must not reach the client.
    const auto url = shown_url();
    const auto length = parse_number(head.header("content-length"));
    if (head.status == 200) {
        if (!length) {
            return make_error(error_kind::upstream,
                              url + " answered without a Content-Length; the index will not relay a body whose "
                                    "length it cannot check");
        }
        if (*length != file.size) {
            return make_error(error_kind::upstream, url + " announces " + std::to_string(*length) + " bytes but " +
                                                        file.filename + " has " + std::to_string(file.size) +
                                                        " bytes in the index; the asset changed since it was "
                                                        "registered, so register it again");
        }
        return head_plan{true, file.size};
    }
    if (head.status == 206 && range) {
        const auto expected = http_conditional::content_range(*range, file.size);
        if (head.header("content-range") != expected || !length || *length != range->length) {
            return make_error(error_kind::upstream, url + " answered the range with Content-Range '" +
                                                        std::string(head.header("content-range")) + "' where '" +
                                                        expected + "' was due");
        }
        return head_plan{false, range->length};
    }
    if (head.status == 416) {
        return make_error(error_kind::upstream, url + " holds fewer bytes than the index recorded (" +
                                                    std::to_string(file.size) + "); the asset changed since it was "
                                                                               "registered");
    }
    if (file.fetch_url && (head.status == 401 || head.status == 403 || head.status == 404)) {
        return make_error(error_kind::upstream,
                          *file.fetch_url + " answered HTTP " + std::to_string(head.status) + " for " + url +
                              ": a private repository's asset is read through GitHub's API, which needs the server's "
                              "--github-token to be a token that can read it");
    }
    return make_error(error_kind::upstream, url + " answered HTTP " + std::to_string(head.status));
}

transport::outgoing_response remote_downloads::transfer::streamed_response(const head_plan& plan) const {
    const download_answer answer(request, file.sha256, file.size, private_index, file.upload_time_ms / 1000);
    return transport::make_streamed_response(answer.head(!plan.whole), plan.length, body);
}

remote::fetch_request remote_downloads::transfer::upstream_request() const {
    remote::fetch_request fetch;
    fetch.url = *file.remote_url;
    fetch.cancellation = cancellation;
    if (file.fetch_url) {
        // A private repository's asset: through the API, with the token the settings hold now.
        fetch.url = *file.fetch_url;
        fetch.headers = remote::asset_download_headers(github_token);
    }
    if (range) {
        fetch.headers.emplace_back("Range", "bytes=" + std::to_string(range->first) + "-" +
                                                std::to_string(range->first + range->length - 1));
    }
    return fetch;
}

result<void> remote_downloads::transfer::on_head(relay_progress& progress, const remote::fetch_response& head,
                                                 const storage::blob_store& blobs) const {
    auto checked = check_head(head);
    if (!checked) {
        progress.refusal = checked.error();
        return checked.error();
    }
    progress.plan = *checked;
    if (progress.plan.whole) {
        if (auto digest = crypto::hasher::create(crypto::hash_algorithm::sha256); digest) {
            progress.digest.emplace(std::move(*digest));
        }
    }
    if (progress.plan.whole && keep_copy) {
        if (auto created = blobs.create_spool(); created) {
            progress.spool_file = storage::descriptor(::open(created->path().c_str(), O_WRONLY | O_CLOEXEC));
            if (progress.spool_file) progress.spool = std::move(created).value();
        }
        if (!progress.spool) spdlog::warn("cache: no spool file for {}; serving it without keeping a copy", file.filename);
    }
    progress.batch.reserve(batch_bytes);
    respond(streamed_response(progress.plan));
    progress.head_sent = true;
    return {};
}

result<void> remote_downloads::transfer::on_bytes(relay_progress& progress, std::span<const char> bytes) const {
    progress.received += bytes.size();
    if (progress.received > progress.plan.length) {
        return make_error(error_kind::upstream, shown_url() + " sent more than the " +
                                                    std::to_string(progress.plan.length) + " bytes it announced");
    }
    // A batch never grows past its reserved size: growing would copy it into a new allocation.
    if (!progress.batch.empty() && progress.batch.size() + bytes.size() > batch_bytes) {
        if (auto pushed = push_batch(progress); !pushed) return pushed;
    }
    progress.batch.append(bytes.data(), bytes.size());
    // A slow remote host still reaches the client soon.
    if (progress.batch.size() < batch_bytes && std::chrono::steady_clock::now() - progress.last_push < batch_delay) {
        return {};
    }
    return push_batch(progress);
}

void remote_downloads::transfer::absorb(relay_progress& progress, std::string_view bytes) const {
    if (progress.digest) progress.digest->update(bytes);
    if (progress.spool && storage::write_all(progress.spool_file.get(), bytes) != 0) {
        spdlog::warn("cache: writing {} failed ({}); serving it without keeping a copy",
                     progress.spool->path().string(), std::strerror(errno));
        (void)progress.spool_file.close();
        progress.spool.reset();
    }
}

result<void> remote_downloads::transfer::push_batch(relay_progress& progress) const {
    progress.last_push = std::chrono::steady_clock::now();
    // push() waits while the client is behind: the remote host is not read meanwhile.
    if (!progress.held.empty() && !body->push(std::move(progress.held))) {
        return make_error(error_kind::upstream, "the client closed the connection");
    }
    progress.held = std::exchange(progress.batch, body->take_buffer());
    progress.batch.reserve(batch_bytes);
    absorb(progress, progress.held);
    return {};
}

void remote_downloads::transfer::run(remote::http_client& client, const storage::blob_store& blobs,
                                    metrics::server_metrics& metrics) {
    relay_progress progress;
    body->on_cancel([weak = std::weak_ptr(cancellation)] {
        if (auto alive = weak.lock()) alive->cancel();
    });
    const auto fetched = client.fetch_to(
        upstream_request(), [&](std::span<const char> bytes) { return on_bytes(progress, bytes); },
        [&](const remote::fetch_response& head) { return on_head(progress, head, blobs); });
    finish(progress, fetched, blobs, metrics);
}

void remote_downloads::transfer::finish(relay_progress& progress, const result<remote::fetch_response>& fetched,
                                        const storage::blob_store& blobs, metrics::server_metrics& metrics) const {
    const auto url = shown_url();
    if (!progress.head_sent) {
        const auto failure = progress.refusal ? *progress.refusal
                             : fetched        ? make_error(error_kind::upstream, url + " sent no response")
                                              : fetched.error();
        spdlog::warn("proxy {}: {}", file.filename, failure.message);
        metrics.record_proxy_upstream_error();
        // The bucket's host and the URL signed for it are the index's business, not the client's.
        if (own_store) return respond(busy(request, "try again shortly: the object store holding this index's files "
                                                     "did not send it (the administrator has the details in the log)"));
        return respond(upstream_failure(request, failure));
    }
    if (!fetched) {
        if (!body->cancelled()) {
            spdlog::warn("proxy {}: ended mid-body: {}", file.filename, fetched.error().message);
            metrics.record_proxy_upstream_error();
        }
        return body->fail();
    }
    absorb(progress, progress.batch);
    if (!whole_and_verified(progress, metrics)) return body->fail();
    const bool delivered = (progress.held.empty() || body->push(std::move(progress.held))) &&
                           (progress.batch.empty() || body->push(std::move(progress.batch)));
    if (delivered) body->finish();
    // Kept after the last bytes went: syncing a large copy takes as long as the disk needs
    // (3.7 s a GiB here), and the client need not wait for it. Until it is in place, a request
    // for the file streams it again; the copy is kept whether or not this client stayed.
    keep_verified_copy(progress, blobs);
}

bool remote_downloads::transfer::whole_and_verified(relay_progress& progress,
                                                    metrics::server_metrics& metrics) const {
    const auto url = shown_url();
    if (progress.received != progress.plan.length) {
        spdlog::warn("proxy {}: {} sent {} of the {} bytes it announced", file.filename, url, progress.received,
                     progress.plan.length);
        metrics.record_proxy_upstream_error();
        return false;
    }
    if (!progress.plan.whole) return true;
    const auto actual = progress.digest ? progress.digest->finish_hex() : std::string();
    if (actual == file.sha256) return true;
    spdlog::error("proxy {}: the bytes from {} have sha256 {} but the index holds {}; the client's "
                  "connection was ended. Register the asset again if it was replaced on purpose",
                  file.filename, url, actual, file.sha256);
    metrics.record_proxy_upstream_error();
    return false;
}

void remote_downloads::transfer::keep_verified_copy(relay_progress& progress, const storage::blob_store& blobs) const {
    if (!progress.spool) return;
    (void)progress.spool_file.close();
    if (auto put = blobs.put_blob(file.sha256, progress.spool->path()); !put) {
        spdlog::warn("cache: keeping {} failed: {}", file.filename, put.error().message);
    } else {
        if (*put == storage::put_outcome::created)
            spdlog::info("cache: kept {} ({} bytes) from {}", file.filename, file.size, *file.remote_url);
        if (kept) kept();
    }
}

remote_downloads::remote_downloads(remote::http_client& asset_client, const storage::blob_store& blobs,
                                   metrics::server_metrics& metrics, options settings)
    : asset_client_(asset_client),
      blobs_(blobs),
      metrics_(metrics),
      options_(std::move(settings)),
      threads_(std::max(1u, options_.max_transfers), std::max(1u, options_.max_transfers),
               [](std::string_view what) { spdlog::error("proxy transfer: {}", what); }) {}

remote_downloads::~remote_downloads() { stop(); }

void remote_downloads::stop() {
    std::set<std::shared_ptr<transfer>> running;
    {
        std::lock_guard lock(mutex_);
        stopping_ = true;
        running = transfers_;
    }
    for (const auto& each : running) each->body->cancel();
    threads_.shutdown(concurrency::worker_pool::shutdown_mode::drain);
}

void remote_downloads::forget(const std::shared_ptr<transfer>& done) {
    std::lock_guard lock(mutex_);
    transfers_.erase(done);
    active_.fetch_sub(1, std::memory_order_relaxed);
}

std::optional<transport::outgoing_response> remote_downloads::serve(const http::request_header<>& request,
                                                                    const catalog::file_record& file,
                                                                    const transport::responder& respond,
                                                                    remote_transfer_options how) {
    const bool private_index = options_.private_index;
    if (!file.remote_url || file.remote_url->empty()) {
        return make_text_response(request, http::status::internal_server_error,
                                  "the catalog marks " + file.filename + " as remote but holds no URL for it; "
                                                                         "register it again");
    }
    if (file.mode == catalog::download_mode::redirect) {
        return redirect_download(request, *file.remote_url, private_index);
    }

    const download_answer answer(request, file.sha256, file.size, private_index, file.upload_time_ms / 1000);
    if (auto done = answer.without_body()) return std::move(*done);  // the catalog knows all they need
    auto* client = how.client ? how.client : &asset_client_;

    auto job = std::make_shared<transfer>();
    job->file = file;
    job->request = request;
    job->respond = respond;
    job->body = std::make_shared<transport::relay_body>(options_.buffer_bytes);
    job->range = answer.range();
    job->keep_copy = file.mode == catalog::download_mode::cache;
    job->kept = std::move(how.kept);
    job->private_index = private_index;
    job->own_store = how.own_store;
    if (file.fetch_url) job->github_token = options_.github_token;
    {
        std::lock_guard lock(mutex_);
        if (stopping_) return busy(request, "the server is shutting down; try again shortly");
        if (active_.load(std::memory_order_relaxed) >= options_.max_transfers) {
            return busy(request, "all " + std::to_string(options_.max_transfers) +
                                     " proxied downloads are in progress; try again in a few seconds");
        }
        transfers_.insert(job);
        active_.fetch_add(1, std::memory_order_relaxed);
    }
    const auto* blobs = &blobs_;
    auto* metrics = &metrics_;
    const bool submitted = threads_.try_submit([this, job, client, blobs, metrics] {
        job->run(*client, *blobs, *metrics);
        forget(job);
    });
    if (!submitted) {
        forget(job);
        return busy(request, "the server is shutting down; try again shortly");
    }
    return std::nullopt;
}

}  // namespace wheelhouse::app
