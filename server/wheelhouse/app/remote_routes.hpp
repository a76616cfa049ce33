#pragma once
// Registering wheels that stay on GitHub, under /api/v1/ (upload or admin token):
//   POST remote         {"url", "sha256"?, "mode"?, "verify"?}     one asset: 201 added, 200 present
//   POST import/github  {"repository": "OWNER/REPO", "tag", "mode"?, "verify"?}   a whole release
// The work (Range requests, validation, catalog write) runs on the ingest workers, never on an
// I/O thread; 503 when the pool is full or no HTTP client is configured. Refusals are JSON
// {"error": "..."} with the status of their kind.

#include "wheelhouse/app/route_context.hpp"
#include "wheelhouse/auth/token_store.hpp"
#include "wheelhouse/concurrency/worker_pool.hpp"
#include "wheelhouse/http/request_target.hpp"
#include "wheelhouse/ingest/ingester.hpp"
#include "wheelhouse/transport/request_handler.hpp"

namespace wheelhouse::app {

// Thread safety: plan() and handle() run on I/O threads; registrations on the pool's workers.
class remote_routes {
public:
    remote_routes(route_context& context, auth::token_store& tokens, concurrency::worker_pool& workers);

    // /api/v1/remote and /api/v1/import/github, whatever the method (a wrong one is answered 405).
    static bool claims(const http_target::request_target& target);

    // A JSON body of at most 64 KiB, read into memory.
    transport::body_plan plan(const http::request_header<>& request) const;
    void handle(transport::incoming_request request, const http_target::request_target& target,
                const transport::responder& respond);

private:
    route_context& context_;
    auth::token_store& tokens_;
    concurrency::worker_pool& workers_;
    ingest::ingester ingester_;
};

}  // namespace wheelhouse::app
