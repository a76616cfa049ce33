#pragma once
// A project's trusted publishers, for the admin page and scripts (admin scope, limited to the
// project like every curation route):
//   GET    /api/v1/projects/<project>/publishers        {"project", "audience", "token_lifetime", "publishers": [...]}
//   POST   /api/v1/projects/<project>/publishers        {"kind", "repository", "owner_id", "workflow",
//                                                        "issuer"?, "environment"?, "label_pattern"?} -> 201
//   DELETE /api/v1/projects/<project>/publishers/<id>   removes it and revokes the tokens it minted

#include "wheelhouse/app/route.hpp"
#include "wheelhouse/app/route_context.hpp"

namespace wheelhouse::app::publishers {

// Thread safety: a worker (the read pool for the list, the write pool for changes).
route_answer list_publishers(route_context& context, route_request& request);
route_answer add_publisher(route_context& context, route_request& request);
route_answer remove_publisher(route_context& context, route_request& request);

}  // namespace wheelhouse::app::publishers
