#pragma once
// GET /metrics: the server's counters and levels in the Prometheus text format.

#include "wheelhouse/app/route.hpp"
#include "wheelhouse/app/route_context.hpp"
#include "wheelhouse/concurrency/worker_pool.hpp"
#include "wheelhouse/transport/request_handler.hpp"

namespace wheelhouse::app {

// Reads the levels (the write pool's queue, catalog size, page cache) now and renders every metric.
// Thread safety: any thread; one catalog read a scrape.
transport::outgoing_response serve_metrics(route_context& context, const http::request_header<>& request,
                                           const concurrency::worker_pool& write_workers);

// The route: serve_metrics with the write pool's levels. Thread safety: a read worker.
route_answer metrics_page(route_context& context, route_request& request);

}  // namespace wheelhouse::app
