#pragma once
// GET /files/<sha256>/<filename> (the wheel) and /files/<sha256>/<filename>.metadata (PEP 658).

#include "wheelhouse/app/route_context.hpp"
#include "wheelhouse/http/request_target.hpp"
#include "wheelhouse/transport/request_handler.hpp"

namespace wheelhouse::app {

// Thread safety: any I/O thread (reads the catalog on the calling thread's reader).
transport::outgoing_response serve_file(const route_context& context, const http::request_header<>& request,
                                        const http_target::request_target& target);

}  // namespace wheelhouse::app
