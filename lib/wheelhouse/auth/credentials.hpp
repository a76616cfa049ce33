#pragma once
// The API token a request presents in its Authorization header, the two ways clients send it.

#include <string>
#include <string_view>

#include "wheelhouse/result.hpp"

namespace wheelhouse::auth {

// The username twine and PyPI use for API tokens: the token itself is the password.
inline constexpr std::string_view token_username = "__token__";

enum class credential_scheme {
    basic,   // `Basic base64(__token__:<token>)`: twine, curl -u, pip's keyring
    bearer,  // `Bearer <token>`: scripts
};

struct presented_token {
    credential_scheme scheme = credential_scheme::bearer;
    std::string token;  // a secret: never log it
};

// Parses an Authorization header value. Scheme names are case-insensitive (RFC 9110). Errors
// are error_kind::unauthorized, with messages that never repeat the credentials (a user who
// swapped username and password would otherwise see the token in a log).
result<presented_token> parse_authorization(std::string_view header_value);

// parse_authorization's answer and, when it refuses, why in fixed words for the server's log.
// Unlike the client's message they repeat nothing the client sent, not even the scheme name: a
// password pasted without "Basic " would be one.
struct authorization_reading {
    result<presented_token> token;
    std::string_view refusal;  // empty when `token` holds one
};
authorization_reading read_authorization(std::string_view header_value);

}  // namespace wheelhouse::auth
