#pragma once
// GET /api/v1/projects/<project>/variants: each release's builds with their decoded variant and
// the selectors whose index lists them (render::variant_matrix_json).

#include "wheelhouse/app/route.hpp"
#include "wheelhouse/app/route_context.hpp"

namespace wheelhouse::app {

// The name is looked up normalised, without a redirect. Thread safety: a read worker.
route_answer project_variants(route_context& context, route_request& request);

}  // namespace wheelhouse::app
