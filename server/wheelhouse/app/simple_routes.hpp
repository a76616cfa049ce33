#pragma once
// GET /simple/ and /simple/<project>/ in HTML or JSON, from the page cache.

#include <string_view>

#include "wheelhouse/app/route_context.hpp"
#include "wheelhouse/http/request_target.hpp"
#include "wheelhouse/transport/request_handler.hpp"

namespace wheelhouse::app {

// `path` is the target's segments after "simple"; `prefix` the path up to and including
// "simple/" (for redirects). Thread safety: any I/O thread.
transport::outgoing_response serve_simple(const route_context& context, const http::request_header<>& request,
                                          const http_target::request_target& target, std::string_view prefix,
                                          std::size_t first_segment);

}  // namespace wheelhouse::app
