#pragma once
// GET /simple/… and /variants/<selector>/simple/… in HTML or JSON, from the page cache.

#include <optional>
#include <string>
#include <string_view>

#include "wheelhouse/app/route.hpp"
#include "wheelhouse/app/route_context.hpp"
#include "wheelhouse/transport/request_handler.hpp"
#include "wheelhouse/variants/selector.hpp"

namespace wheelhouse::app {

// One index of simple pages. /simple/ shows every file; a variant index only what its selector
// lists (catalog::listed_files), and keeps its pages in the cache scope of its canonical name.
struct simple_index {
    std::string prefix;                          // the path up to and including "simple/"
    std::optional<variants::selector> selector;  // none for /simple/
};

// The routes, each reading its row's captures: /simple/ and /simple/{project...}, in HTML or
// JSON by Accept or ?format=. The project list shows the projects the request's grant makes
// visible (a project-limited token's, on a private index); each filter's list is cached apart. A
// cached page is answered at once; a missing one is rendered on the read pool, which answers
// through request.respond (nullopt is returned then). Thread safety: any I/O thread.
route_answer simple_page(route_context& context, route_request& request);
// /variants/{selector}/simple/…: the same pages, of the selector's index, after a 301 to the
// selector's canonical spelling; 404 for an unknown selector word and 400 for a selector that is
// malformed or contradicts itself (each with the reason).
route_answer variant_page(route_context& context, route_request& request);
// /variants/{selector}/: a 301 to the index's /simple/ (refused as variant_page refuses).
route_answer variant_root(route_context& context, route_request& request);

}  // namespace wheelhouse::app
