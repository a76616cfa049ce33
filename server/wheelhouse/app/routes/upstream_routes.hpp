#pragma once
// GET /api/v1/upstream: what operators see of upstream indexes (issue 26) — the upstreams and
// routes configured, the names reserved, each upstream's page counters, and which upstream
// projects have files kept here, with their sizes.

#include "wheelhouse/app/route.hpp"
#include "wheelhouse/app/route_context.hpp"

namespace wheelhouse::app {

// Thread safety: a read worker (two catalog reads).
route_answer upstream_overview(route_context& context, route_request& request);

}  // namespace wheelhouse::app
