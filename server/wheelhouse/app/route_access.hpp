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

// The project a {filename} names: the wheel's PEP 503 name ("" when it is no wheel filename);
// "<wheel>.metadata" names the wheel's project.
std::string project_of_file(std::string_view filename);

// Whether `grant` may do what a route that needs `needed` does on `project`; forbidden, with a
// message naming the token and the project, when it may not.
result<void> grant_covers(const auth::token_grant& grant, access needed, std::string_view project);

}  // namespace wheelhouse::app
