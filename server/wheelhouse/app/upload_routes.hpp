#pragma once
// Uploads from CI: POST /legacy/ (twine's form, curl -F) and PUT /api/v1/files/<filename>
// (curl -T). Credentials and limits are checked from the headers before the body is read;
// the body streams to a spool file; validation and hashing run on the ingest worker pool (a
// full queue is answered 503 at once), and the catalog write in the ingester's group commit.

#include <chrono>
#include <cstdint>
#include <optional>

#include "wheelhouse/app/route_context.hpp"
#include "wheelhouse/auth/token_store.hpp"
#include "wheelhouse/concurrency/worker_pool.hpp"
#include "wheelhouse/http/request_target.hpp"
#include "wheelhouse/ingest/ingester.hpp"
#include "wheelhouse/transport/request_handler.hpp"

namespace wheelhouse::app {

struct upload_settings {
    std::uint64_t max_upload_bytes = 4ull << 30;
    std::chrono::seconds retry_after{5};  // told to clients when the queue is full
};

// Thread safety: plan() and handle() run on I/O threads; ingest jobs on the pool's workers.
class upload_routes {
public:
    upload_routes(route_context& context, auth::token_store& tokens, concurrency::worker_pool& workers,
                  upload_settings settings);

    // True when `target` with this method is an upload route.
    static bool is_upload(http::verb method, const http_target::request_target& target);

    transport::body_plan plan(const http::request_header<>& request, const http_target::request_target& target);
    void handle(transport::incoming_request request, const http_target::request_target& target,
                const transport::responder& respond);
    // Answers the uploads whose rows wait for their commit. Thread safety: once the ingest
    // workers have stopped, while the sessions' io_context still exists.
    void finish();

private:
    transport::outgoing_response refusal(const http::request_header<>& request, const error& failure) const;

    route_context& context_;
    auth::token_store& tokens_;
    concurrency::worker_pool& workers_;
    upload_settings settings_;
    ingest::ingester ingester_;
};

}  // namespace wheelhouse::app
