#pragma once
// The one access check, from a request's headers and its route's declaration: a token when the
// route needs one (read routes only on a --private server), of a scope that reaches the route's,
// limited to projects that cover the route's project. Runs in plan_body, before any body is read.

#include <string>
#include <string_view>

#include "wheelhouse/app/route.hpp"
#include "wheelhouse/auth/token_store.hpp"
#include "wheelhouse/result.hpp"

namespace wheelhouse::app {

// Fills `request`'s grant, project and visible filter, or says why the caller may not use the
// route: unauthorized (no usable token) or forbidden (scope or project), with messages that say
// how to send a token or what the token may do. Thread safety: any thread.
result<void> check_access(const auth::token_store& tokens, const http::request_header<>& header, bool private_index,
                          route_request& request);

// Whether `grant` may do what a route that needs `needed` does on `project`; forbidden, with a
// message naming the token and the project, when it may not. An empty `project` (a request
// whose project could not be told) is forbidden to a token limited to some projects.
result<void> grant_covers(const auth::token_grant& grant, access needed, std::string_view project);

// The refusal of `filename`, which names no project (`why`: the parser's reason), to a token
// limited to some projects: access checks fail closed.
error names_no_project(const auth::token_grant& grant, std::string_view filename, const error& why);

}  // namespace wheelhouse::app
