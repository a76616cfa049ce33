#pragma once
// The metrics label of a request, read from the row of the route table it reached: lib/'s
// metrics keep only the labels, the table says which request is which.

#include <string_view>

#include "wheelhouse/app/router.hpp"
#include "wheelhouse/metrics/route.hpp"

namespace wheelhouse::app {

// The label of the route `method` and `target` reach in `routes` (a path whose methods do not
// fit counts under its route, but never as an upload); metrics::route::other when no route has
// the path or the target is malformed. Thread safety: as router::match, any thread.
metrics::route route_label(const router& routes, std::string_view method, std::string_view target);

}  // namespace wheelhouse::app
