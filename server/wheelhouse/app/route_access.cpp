#include "wheelhouse/app/route_access.hpp"

#include <spdlog/spdlog.h>

#include "wheelhouse/auth/build_labels.hpp"
#include "wheelhouse/auth/credentials.hpp"
#include "wheelhouse/distribution/file_name.hpp"
#include "wheelhouse/error_text.hpp"
#include "wheelhouse/pep503/name.hpp"
#include "wheelhouse/text/quoted.hpp"

namespace wheelhouse::app {
namespace {

auth::scope scope_needed(access needed) {
    switch (needed) {
        case access::upload: return auth::scope::upload;
        case access::admin: return auth::scope::admin;
        case access::anyone:
        case access::read: break;
    }
    return auth::scope::read;
}

// The detail beside how_to_send: a whole command, and who makes tokens.
std::string_view example_of_sending(access needed, audience answers) {
    if (answers != audience::package_tools || needed != access::read) return {};
    return "e.g. pip install --index-url http://__token__:<token>@<host>/simple/ <project>; an admin creates a "
           "token with: wheelhouse token create --name <who> --scope read";
}

// How to present a token, in the terms of the clients the route answers.
std::string_view how_to_send(access needed, audience answers) {
    if (answers == audience::package_tools) {
        if (needed == access::read) return "put one in the index URL: http://__token__:<token>@<host>/simple/";
        return "twine upload -u __token__ -p <token>, or curl -u __token__:<token>";
    }
    switch (needed) {
        case access::admin:
            return "send 'Authorization: Bearer <token>' with a token of scope admin (wheelhouse token create NAME "
                   "--scope admin)";
        case access::upload: return "send 'Authorization: Bearer <token>' with a token of scope upload or admin";
        case access::anyone:
        case access::read: break;
    }
    return "send 'Authorization: Bearer <token>' with a token of scope read, upload or admin (wheelhouse token "
           "create NAME --scope read)";
}

std::string_view verb_for(access needed) {
    switch (needed) {
        case access::upload: return "upload to";
        case access::admin: return "change";
        case access::anyone:
        case access::read: break;
    }
    return "read";
}

std::string_view token_for_every_project(access needed) {
    switch (needed) {
        case access::upload: return "an upload token";
        case access::admin: return "an admin token";
        case access::anyone:
        case access::read: break;
    }
    return "a token";
}

std::vector<std::string> normalized_patterns(const auth::token_grant& grant) {
    std::vector<std::string> patterns;
    for (const auto& pattern : grant.project_patterns) patterns.push_back(pep503::normalize(pattern));
    return patterns;
}

struct access_rule {
    auth::scope needed = auth::scope::admin;
    std::string_view action;        // what is refused, as the subject of "need": "uploads", "yanking a file"
    std::string_view how_to_send;   // for a request without credentials: how to present a token
    std::string_view example = {};  // and, for the answer's detail, an example or where to get one
};

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

// The grant of the token in the Authorization header (Basic __token__:<token> or Bearer
// <token>) when its scope reaches `rule.needed`: unauthorized without a usable token, forbidden
// when its scope is too low. Project limits are checked after it, once the project is known.
result<auth::token_grant> authorize(const auth::token_store& tokens, const http::request_header<>& request,
                                    const access_rule& rule) {
    const auto authorization = field_value(request, http::field::authorization);
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

error names_no_project(const auth::token_grant& grant, std::string_view filename, const error& why) {
    return make_error(error_kind::forbidden,
                      "give a wheel's or an sdist's filename: " + text::quoted(filename, 60) +
                          " names no project, and token '" + grant.name + "' is limited to some projects",
                      describe(why));
}

result<void> grant_covers(const auth::token_grant& grant, access needed, std::string_view project) {
    const bool limited = !grant.project_patterns.empty();
    if (project.empty() && limited) {
        return make_error(error_kind::forbidden, "token '" + grant.name +
                                                     "' is limited to some projects, and this request names none");
    }
    if (auth::permits(grant, scope_needed(needed), project)) return {};
    return make_error(error_kind::forbidden, "token '" + grant.name + "' may not " + std::string(verb_for(needed)) +
                                                 " project '" + std::string(project) + "'");
}

}  // namespace

result<void> may_act_on(const route_request& request, std::string_view named) {
    if (!request.grant) return {};  // the route asked for no token (it needs none, or the index is public)
    return grant_covers(*request.grant, request.matched->needs, named);
}

result<std::string> may_act_on_file(const route_request& request, std::string_view filename) {
    auto named = distribution::parse_file_name(filename);
    if (!named) {
        if (request.grant && !request.grant->project_patterns.empty()) {
            return names_no_project(*request.grant, filename, named.error());
        }
        return std::string();
    }
    std::string named_project = named->project();
    if (auto allowed = may_act_on(request, named_project); !allowed) return allowed.error();
    return named_project;
}

bool may_store_early(const auth::token_grant& grant, access needed, std::string_view filename) {
    // A wheel or sdist only, as the ingester takes: a .metadata or variants.json name is refused.
    const auto named = distribution::parse_archive_name(filename);
    return named && grant_covers(grant, needed, distribution::project_of(*named)) && auth::permits_file(grant, filename);
}

result<void> check_access(const auth::token_store& tokens, const http::request_header<>& header, bool private_index,
                          route_request& request) {
    const route& declared = *request.matched;
    if (declared.needs == access::anyone || (declared.needs == access::read && !private_index)) return {};
    const access_rule rule{scope_needed(declared.needs), declared.action, how_to_send(declared.needs, declared.answers),
                           example_of_sending(declared.needs, declared.answers)};
    auto grant = authorize(tokens, header, rule);
    if (!grant) return grant.error();
    const auto& token = request.grant.emplace(std::move(*grant));
    const bool limited = !token.project_patterns.empty();

    switch (declared.scope) {
        case project_scope::none:
        case project_scope::body: return {};
        case project_scope::listing:
            request.visible.patterns = normalized_patterns(token);
            return {};
        case project_scope::index:
            if (!limited) return {};
            return make_error(error_kind::forbidden, "token '" + token.name + "' is limited to some projects; " +
                                                         std::string(declared.action) + " need " +
                                                         std::string(token_for_every_project(declared.needs)) +
                                                         " for every project");
        case project_scope::project: request.project = pep503::normalize(request.capture("project")); break;
        case project_scope::file: {
            // A name of no project, from a token for every project, is the handler's to answer.
            auto project = may_act_on_file(request, request.capture("filename"));
            if (!project) return project.error();
            request.project = std::move(*project);
            return {};
        }
    }
    return grant_covers(token, declared.needs, request.project);
}

}  // namespace wheelhouse::app
