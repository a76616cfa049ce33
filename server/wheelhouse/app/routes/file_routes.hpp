#pragma once
// GET /files/<sha256>/<filename> (the wheel) and /files/<sha256>/<filename>.metadata (PEP 658);
// a file's PEP 740 provenance.

#include <optional>

#include "wheelhouse/app/route.hpp"
#include "wheelhouse/app/route_context.hpp"
#include "wheelhouse/transport/request_handler.hpp"

namespace wheelhouse::app {

// The routes of /files/{sha256}/{filename} and /files/{sha256}/{filename}.metadata (PEP 658):
// the file from disk, the bucket, its remote URL or an upstream index, or nullopt when a proxied
// download has taken request.respond to answer once the remote host has. download_file runs on
// an I/O thread (one indexed lookup before sendfile or a proxy takes over); download_metadata on
// the read pool, as its row says.
route_answer download_file(route_context& context, route_request& request);
route_answer download_metadata(route_context& context, route_request& request);

// PEP 740's integrity API: GET /integrity/<project>/<version>/<filename>/provenance, the
// provenance kept when the file was uploaded with attestations that verified; 404 otherwise.
route_answer file_provenance(route_context& context, route_request& request);

}  // namespace wheelhouse::app
