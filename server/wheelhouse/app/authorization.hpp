#pragma once
// Who may do what: the one check of a request's API token that uploads and the admin API
// share, so a script and the admin page meet the same rules and the same messages.

#include <string_view>

#include "wheelhouse/auth/token_store.hpp"
#include "wheelhouse/result.hpp"
#include "wheelhouse/transport/net.hpp"

namespace wheelhouse::app {

struct access_rule {
    auth::scope needed = auth::scope::admin;
    std::string_view action;        // what is refused, as the subject of "need": "uploads", "yanking a file"
    std::string_view how_to_send;   // for a request without credentials: how to present a token
    std::string_view example = {};  // and, for the answer's detail, an example or where to get one
};

// The grant of the token in the Authorization header (Basic __token__:<token> or Bearer
// <token>) when its scope reaches `rule.needed`: unauthorized without a usable token, forbidden
// when its scope is too low. Project limits are the caller's to check (auth::permits), since
// only the caller knows the project. Every refusal of credentials that were sent is logged once,
// with the reason and the token's name when known, never the secret. Thread safety: any thread.
result<auth::token_grant> authorize(const auth::token_store& tokens, const http::request_header<>& request,
                                    const access_rule& rule);

}  // namespace wheelhouse::app
