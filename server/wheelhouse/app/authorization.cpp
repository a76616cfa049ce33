#include "wheelhouse/app/authorization.hpp"

#include <spdlog/spdlog.h>

#include "wheelhouse/auth/credentials.hpp"
#include "wheelhouse/error_text.hpp"

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

// One line per refused credential, in the server's words: never the secret, nor anything else
// of the Authorization header, which a client may fill with its password by mistake.
void log_refusal(const access_rule& rule, std::string_view reason, const http::request_header<>& request) {
    spdlog::warn("{} refused: {} ({} {})", rule.action, reason, request.method_string(), request.target());
}

}  // namespace

result<auth::token_grant> authorize(const auth::token_store& tokens, const http::request_header<>& request,
                                    const access_rule& rule) {
    const auto authorization = request[http::field::authorization];
    if (authorization.empty()) {
        return make_error(error_kind::unauthorized,
                          std::string(rule.action) + " need an API token: " + std::string(rule.how_to_send),
                          std::string(rule.example));
    }
    auto presented = auth::read_authorization(authorization);
    if (!presented.token) {
        log_refusal(rule, presented.refusal, request);
        return presented.token.error();
    }
    auto checked = tokens.check(presented.token->token);
    if (!checked.grant) {
        log_refusal(rule, checked.refusal, request);
        return checked.grant.error();
    }
    const auto& grant = *checked.grant;
    if (grant.granted < rule.needed) {
        auto too_low = make_error(error_kind::forbidden, "token '" + grant.name + "' has scope " +
                                                             std::string(auth::to_string(grant.granted)) + "; " +
                                                             std::string(rule.action) + " need " +
                                                             std::string(scopes_reaching(rule.needed)));
        log_refusal(rule, too_low.message, request);
        return too_low;
    }
    return grant;
}

}  // namespace wheelhouse::app
