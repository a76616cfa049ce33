#pragma once
// The one access check, from a request's headers and its route's declaration: a token when the
// route needs one (read routes only on a --private server), of a scope that reaches the route's,
// limited to projects that cover the route's project. Runs in plan_body, before any body is read;
// handlers of routes whose project is named in the body ask it here too. Every refusal of
// credentials that were sent is logged once, with the reason and the token's name when known,
// never the secret.

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

// For project_scope::body: whether `request`'s grant covers the project `named`; forbidden,
// saying why, if not. An empty `named` (a request whose project could not be told) is forbidden
// to a token limited to some projects.
result<void> may_act_on(const route_request& request, std::string_view named);

// The same for the project `filename` names (distribution::parse_file_name), which it returns
// ("" when the name names none and the grant, if any, covers every project: the handler refuses
// the name). A token limited to some projects is refused a name that names none: access checks
// fail closed.
result<std::string> may_act_on_file(const route_request& request, std::string_view filename);

// Whether `grant` may store the file `filename` names as `needed` asks, before the handler's
// checks: a large form upload going to the bucket while its body arrives. Yes only for a wheel's
// or an sdist's name (distribution::parse_archive_name), of a project the grant covers, and of
// builds it may publish; whatever it cannot tell is no (the handler then refuses with the
// reason, or stores the file once whole).
bool may_store_early(const auth::token_grant& grant, access needed, std::string_view filename);

}  // namespace wheelhouse::app
