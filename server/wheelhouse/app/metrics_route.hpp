#pragma once
// GET /metrics: the server's counters and levels in the Prometheus text format.

#include "wheelhouse/app/route_context.hpp"
#include "wheelhouse/concurrency/worker_pool.hpp"
#include "wheelhouse/transport/request_handler.hpp"

namespace wheelhouse::app {

// Reads the levels (ingest queue, catalog size, page cache) now and renders every metric.
// Thread safety: an I/O thread; one catalog read a scrape.
transport::outgoing_response serve_metrics(route_context& context, const http::request_header<>& request,
                                           const concurrency::worker_pool& ingest_workers);

}  // namespace wheelhouse::app
