#pragma once
// GET /simple/… and /variants/<selector>/simple/… in HTML or JSON, from the page cache.

#include <optional>
#include <string>
#include <string_view>

#include "wheelhouse/app/route.hpp"
#include "wheelhouse/app/route_context.hpp"
#include "wheelhouse/catalog/project_filter.hpp"
#include "wheelhouse/http/request_target.hpp"
#include "wheelhouse/transport/request_handler.hpp"
#include "wheelhouse/variants/selector.hpp"

namespace wheelhouse::app {

// One index of simple pages. /simple/ shows every file; a variant index only what its selector
// lists (catalog::listed_files), and keeps its pages in the cache scope of its canonical name.
struct simple_index {
    std::string prefix;                          // the path up to and including "simple/"
    std::size_t first_segment = 1;               // the target's first segment after "simple"
    std::optional<variants::selector> selector;  // none for /simple/
};

// The project list shows the projects the request's grant makes visible (a project-limited
// token's, on a private index); each filter's list is cached apart. A cached page is answered
// at once; a missing one is rendered on the read pool, which answers through request.respond
// (nullopt is returned then). Thread safety: any I/O thread.
route_answer serve_simple(route_context& context, route_request& request, const simple_index& index);

// /variants/<selector>/simple/…: 404 for an unknown selector word and 400 for a selector that
// is malformed or contradicts itself (each with the reason), a 301 to the canonical spelling,
// then serve_simple. Thread safety: any I/O thread.
route_answer serve_variant_simple(route_context& context, route_request& request);

// The routes: /simple/… and /variants/<selector>/… (a variant index and its redirects).
route_answer simple_page(route_context& context, route_request& request);
route_answer variant_page(route_context& context, route_request& request);

}  // namespace wheelhouse::app
