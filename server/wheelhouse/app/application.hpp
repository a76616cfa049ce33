#pragma once
// The index as an HTTP application: finds each request's route in the route table, checks the
// access it declares from the headers alone, reads the body it plans, and runs its handler
// where it says. The transport calls it through transport::request_handler and knows nothing
// else of it.

#include <memory>
#include <span>
#include <vector>

#include "wheelhouse/app/file_lookups.hpp"
#include "wheelhouse/app/page_cache.hpp"
#include "wheelhouse/app/remote_downloads.hpp"
#include "wheelhouse/app/route.hpp"
#include "wheelhouse/app/route_context.hpp"
#include "wheelhouse/app/router.hpp"
#include "wheelhouse/app/routes/static_routes.hpp"
#include "wheelhouse/auth/token_store.hpp"
#include "wheelhouse/catalog/download_counter.hpp"
#include "wheelhouse/concurrency/worker_pool.hpp"
#include "wheelhouse/ingest/ingester.hpp"
#include "wheelhouse/oidc/exchange.hpp"
#include "wheelhouse/oidc/key_cache.hpp"
#include "wheelhouse/oidc/publisher_store.hpp"
#include "wheelhouse/remote/http_client.hpp"
#include "wheelhouse/transport/net.hpp"
#include "wheelhouse/transport/request_handler.hpp"
#include "wheelhouse/upstream/page_store.hpp"

namespace wheelhouse::app {

class application final : public transport::request_handler {
public:
    // `extra_routes` are answered after the route table's (tests add a route that throws).
    // Thread safety: construct on one thread before the server starts.
    application(catalog::catalog& catalog, storage::blob_store& blobs, app_settings settings,
                std::span<const route> extra_routes = {});
    ~application() override;

    // The route, the access check and the body's plan, from the headers; a refusal (404, 405,
    // 401, 403, 413, 503…) is sent without reading the body, which then closes the connection.
    transport::body_plan plan_body(const http::request_header<>& header) override;
    // Runs the route's handler inline or on its pool (503 when the pool's queue is full); a
    // handler that throws is answered 500 and its connection closed, logged once with the peer.
    void handle(transport::incoming_request request, transport::responder respond) override;

    // Notices writes by other processes (`wheelhouse ingest` beside a running server) once a
    // second and drops the cached pages. Thread safety: call once, before the server starts.
    void watch_external_changes(net::io_context& context);
    // Drops the watch timer. Thread safety: call once the server's threads have stopped and
    // before its io_context is destroyed, which the timer must not outlive.
    void stop_watching() noexcept { watch_timer_.reset(); }

    page_cache& pages() noexcept { return pages_; }
    const auth::token_store& tokens() const noexcept { return tokens_; }
    oidc::publisher_store& publishers() noexcept { return publishers_; }
    // What the transport records each request into (server_options::metrics).
    metrics::server_metrics& metrics() noexcept { return metrics_; }

    // Finishes the uploads and other work already queued, then stops the pools; ends the proxied
    // downloads and outbound fetches still running (queued outbound work then fails at once). Thread safety: call once, after the
    // server has drained and before it is destroyed (a transfer may still answer its session).
    void finish_ingests();

private:
    struct dispatch_state;

    std::optional<transport::outgoing_response> route_of(const http::request_header<>& header,
                                                         dispatch_state& state) const;
    transport::outgoing_response refuse_target(const http::request_header<>& header, const error& fault) const;
    transport::body_plan plan_for(const http::request_header<>& header, std::shared_ptr<dispatch_state> state);
    void run_on_lane(const std::shared_ptr<dispatch_state>& state);
    void run_handler(dispatch_state& state) noexcept;
    transport::outgoing_response busy(const route_request& request);
    concurrency::worker_pool& pool_of(lane runs_on) noexcept;
    void poll_external_changes();

    app_settings settings_;
    metrics::server_metrics metrics_;
    page_cache pages_;
    catalog::download_counter downloads_;
    remote::http_client asset_client_;  // release assets: registration, import, proxied downloads
    remote::http_client upstream_client_;  // upstream indexes: pages, .metadata, sizes
    remote::http_client bucket_client_;    // the bucket holding the index's files: proxied downloads
    file_lookups file_lookups_;            // /files/' lookups, dropped at every catalog change
    std::unique_ptr<upstream::page_store> upstream_pages_;  // null without upstreams
    auth::token_store tokens_;
    ingest::ingester ingester_;
    static_routes static_;
    // Two pools, so reads and writes never wait for each other's threads: admin reads (queries,
    // sorts, METADATA files) on one; uploads, registrations and curation, in arrival order, on
    // the other (sized by --ingest-workers and --ingest-queue).
    concurrency::worker_pool read_workers_;
    concurrency::worker_pool write_workers_;
    // A third, for work that waits on other hosts (an issuer's signing keys), bounded on its own:
    // a silent issuer fills this queue, never the one uploads use.
    concurrency::worker_pool outbound_workers_;
    oidc::key_cache issuer_keys_;
    oidc::publisher_store publishers_;
    oidc::token_exchange exchange_;
    remote_downloads remote_files_;  // redirects, proxies or caches them
    route_context context_;  // made of the members above: declared after them
    std::vector<route> routes_;  // the route table and the extra routes; router_ points into it
    router router_;
    std::unique_ptr<net::steady_timer> watch_timer_;
};

}  // namespace wheelhouse::app
