#pragma once
// Downloads of files whose bytes live at a remote URL (GitHub Release assets):
//   redirect  302 to the catalog's remote_url; no byte passes through us
//   proxy     streamed from remote_url (or the row's fetch_url, GitHub's API URL of a private
//             repository's asset, with the configured token) through the server, Range passed
//             on, the whole file's SHA-256 checked before its last bytes go out
//   cache     as proxy, and a whole, verified copy is kept in the blob store for next time
// Proxied transfers run an http_client fetch each on one of a bounded set of threads, its body
// read in one asynchronous loop; the client's socket pulls from a bounded queue while the next
// bytes are read, so a slow client slows the remote host instead of filling our memory. A
// client's hang-up cancels the fetch at once; a failure after the headers ends the client's
// connection short of its Content-Length. Conditionals, Range and HEAD: download_answer.hpp.

#include <atomic>
#include <cstddef>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <set>

#include <string>

#include "wheelhouse/catalog/records.hpp"
#include "wheelhouse/concurrency/worker_pool.hpp"
#include "wheelhouse/metrics/server_metrics.hpp"
#include "wheelhouse/remote/http_client.hpp"
#include "wheelhouse/transport/request_handler.hpp"

namespace wheelhouse::storage {
class blob_store;
}

namespace wheelhouse::app {

// Who fetches a remote download, and who hears that its copy was kept.
struct remote_transfer_options {
    remote::http_client* client = nullptr;  // null: the release-asset client (upstream files have their own)
    std::function<void()> kept;             // cache mode: called once the verified copy is in the blob store
    bool own_store = false;                 // the index's own file from its bucket: failures are 503 and say no URL
};

class remote_downloads {
public:
    struct options {
        unsigned max_transfers = 16;          // proxied downloads at once; more get 503
        std::size_t buffer_bytes = 4u << 20;  // per transfer, between the remote host and the client
        bool private_index = false;           // answers are not to be kept by shared caches
        std::string github_token;             // sent to a private repository's asset (a row's fetch_url)
    };

    // `asset_client` fetches release assets (remote_transfer_options::client names another);
    // cache mode keeps its verified copies in `blobs`; `metrics` counts the transfers.
    remote_downloads(remote::http_client& asset_client, const storage::blob_store& blobs,
                     metrics::server_metrics& metrics, options settings);
    // stop().
    ~remote_downloads();
    remote_downloads(const remote_downloads&) = delete;
    remote_downloads& operator=(const remote_downloads&) = delete;

    // Answers a download of `file` (a remote mode). Returns the response, or nullopt when
    // `respond` has been taken and is called later from a transfer thread.
    // Thread safety: any I/O thread; never blocks.
    std::optional<transport::outgoing_response> serve(const http::request_header<>& request,
                                                      const catalog::file_record& file,
                                                      const transport::responder& respond,
                                                      remote_transfer_options how = {});

    // Cancels every transfer (their clients' connections end) and joins the threads. A transfer
    // waiting on a silent remote host returns at the client's read deadline.
    // Thread safety: any thread but a transfer's; idempotent.
    void stop();

private:
    struct transfer;

    void forget(const std::shared_ptr<transfer>& done);

    remote::http_client& asset_client_;
    const storage::blob_store& blobs_;
    metrics::server_metrics& metrics_;
    options options_;
    std::atomic<std::size_t> active_{0};
    std::mutex mutex_;  // guards transfers_ and stopping_
    std::set<std::shared_ptr<transfer>> transfers_;
    bool stopping_ = false;
    concurrency::worker_pool threads_;
};

}  // namespace wheelhouse::app
