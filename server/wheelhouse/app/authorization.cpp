#include "wheelhouse/app/authorization.hpp"

#include <spdlog/spdlog.h>

#include "wheelhouse/auth/credentials.hpp"

namespace wheelhouse::app {
namespace {

std::string_view scopes_reaching(auth::scope needed) {
    switch (needed) {
        case auth::scope::read: return "read, upload or admin";
        case auth::scope::upload: return "upload or admin";
        case auth::scope::admin: return "admin";
    }
    return "admin";
}

}  // namespace

result<auth::token_grant> authorize(const auth::token_store& tokens, const http::request_header<>& request,
                                    const access_rule& rule) {
    const auto authorization = request[http::field::authorization];
    if (authorization.empty()) {
        return make_error(error_kind::unauthorized,
                          std::string(rule.action) + " need an API token: " + std::string(rule.how_to_send));
    }
    auto presented = auth::parse_authorization(authorization);
    if (!presented) return presented.error();
    auto grant = tokens.authenticate(presented->token);
    if (!grant) {
        spdlog::warn("{} refused: {} ({} {})", rule.action, grant.error().message, request.method_string(),
                     request.target());
        return grant.error();
    }
    if (grant->granted < rule.needed) {
        return make_error(error_kind::forbidden, "token '" + grant->name + "' has scope " +
                                                     std::string(auth::to_string(grant->granted)) + "; " +
                                                     std::string(rule.action) + " need " +
                                                     std::string(scopes_reaching(rule.needed)));
    }
    return grant;
}

}  // namespace wheelhouse::app
