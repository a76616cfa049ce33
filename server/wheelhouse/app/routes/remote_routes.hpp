#pragma once
// Registering wheels that stay on GitHub, under /api/v1/ (the route table asks for an upload or
// admin token and runs these on the outbound lane, never on an I/O thread or where uploads run):
//   POST remote         {"url", "sha256"?, "mode"?, "verify"?}     one asset: 201 added, 200 present
//   POST import/github  {"repository": "OWNER/REPO", "tag", "mode"?, "verify"?}   a whole release
// Refusals are JSON {"error": "..."} with the status of their kind; 503 when no HTTP client is
// configured.

#include "wheelhouse/app/route.hpp"
#include "wheelhouse/app/route_context.hpp"

namespace wheelhouse::app::registration {

route_answer register_asset(route_context& context, route_request& request);
route_answer import_release(route_context& context, route_request& request);

}  // namespace wheelhouse::app::registration
