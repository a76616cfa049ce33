#pragma once
// The index as an HTTP application: routes each request to its handler. The transport calls
// it through transport::request_handler and knows nothing else of it.

#include <memory>

#include "wheelhouse/app/admin_routes.hpp"
#include "wheelhouse/app/page_cache.hpp"
#include "wheelhouse/app/remote_downloads.hpp"
#include "wheelhouse/app/remote_routes.hpp"
#include "wheelhouse/app/route_context.hpp"
#include "wheelhouse/app/static_routes.hpp"
#include "wheelhouse/app/upload_routes.hpp"
#include "wheelhouse/auth/token_store.hpp"
#include "wheelhouse/catalog/download_counter.hpp"
#include "wheelhouse/concurrency/worker_pool.hpp"
#include "wheelhouse/remote/http_client.hpp"
#include "wheelhouse/transport/net.hpp"
#include "wheelhouse/transport/request_handler.hpp"

namespace wheelhouse::app {

class application final : public transport::request_handler {
public:
    // Thread safety: construct on one thread before the server starts.
    application(catalog::catalog& catalog, storage::blob_store& blobs, app_settings settings);
    ~application() override;

    transport::body_plan plan_body(const http::request_header<>& header) override;
    void handle(transport::incoming_request request, transport::responder respond) override;

    // Notices writes by other processes (`wheelhouse ingest` beside a running server) once a
    // second and drops the cached pages. Thread safety: call once, before the server starts.
    void watch_external_changes(net::io_context& context);
    // Drops the watch timer. Thread safety: call once the server's threads have stopped and
    // before its io_context is destroyed, which the timer must not outlive.
    void stop_watching() noexcept { watch_timer_.reset(); }

    page_cache& pages() noexcept { return pages_; }
    // What the transport records each request into (server_options::metrics).
    metrics::server_metrics& metrics() noexcept { return metrics_; }

    // Finishes the uploads already queued, then stops the ingest workers; ends the proxied
    // downloads still running and stops their threads. Thread safety: call once, after the
    // server has drained and before it is destroyed (a transfer may still answer its session).
    void finish_ingests();

private:
    // nullopt: a proxied download took `respond`.
    std::optional<transport::outgoing_response> route(const transport::incoming_request& request,
                                                      const transport::responder& respond);
    void poll_external_changes();

    app_settings settings_;
    metrics::server_metrics metrics_;
    page_cache pages_;
    catalog::download_counter downloads_;
    remote::http_client remote_;  // release assets: registration, import, proxied downloads
    route_context context_;
    auth::token_store tokens_;
    concurrency::worker_pool ingest_workers_;
    upload_routes uploads_;
    admin_routes admin_;
    remote_routes remote_routes_;
    static_routes static_;
    remote_downloads remote_files_;
    std::unique_ptr<net::steady_timer> watch_timer_;
};

}  // namespace wheelhouse::app
