#pragma once
// /api/v1/…: JSON for administrators and scripts.

#include "wheelhouse/app/route_context.hpp"
#include "wheelhouse/http/request_target.hpp"
#include "wheelhouse/transport/request_handler.hpp"

namespace wheelhouse::app {

// Everything under /api/v1/: hands each request to the route for its third segment.
// Thread safety: any I/O thread.
transport::outgoing_response serve_api(const route_context& context, const http::request_header<>& request,
                                       const http_target::request_target& target);

// /api/v1/projects/<project>/variants: render::variant_matrix_json. The name is looked up
// normalised, without a redirect. Thread safety: any I/O thread.
transport::outgoing_response serve_api_projects(const route_context& context, const http::request_header<>& request,
                                                const http_target::request_target& target);

}  // namespace wheelhouse::app
