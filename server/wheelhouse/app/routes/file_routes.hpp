#pragma once
// GET /files/<sha256>/<filename> (the wheel) and /files/<sha256>/<filename>.metadata (PEP 658);
// a file's PEP 740 provenance.

#include <optional>

#include "wheelhouse/app/route.hpp"
#include "wheelhouse/app/route_context.hpp"
#include "wheelhouse/http/request_target.hpp"
#include "wheelhouse/transport/request_handler.hpp"

namespace wheelhouse::app {

// Returns the response, or nullopt when a proxied download has taken `respond` to answer once
// the remote host has.
// Thread safety: any I/O thread (reads the catalog on the calling thread's reader).
std::optional<transport::outgoing_response> serve_file(const route_context& context,
                                                       const http::request_header<>& request,
                                                       const http_target::request_target& target,
                                                       const transport::responder& respond);

// The route: serve_file with the request's own responder; for METADATA, on the read pool.
route_answer download_file(route_context& context, route_request& request);

// PEP 740's integrity API: GET /integrity/<project>/<version>/<filename>/provenance, the
// provenance kept when the file was uploaded with attestations that verified; 404 otherwise.
route_answer file_provenance(route_context& context, route_request& request);

}  // namespace wheelhouse::app
