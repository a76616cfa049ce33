#include "wheelhouse/app/route_access.hpp"

#include "wheelhouse/app/authorization.hpp"
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

}  // namespace

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
            auto project = request.may_act_on_file(request.capture("filename"));
            if (!project) return project.error();
            request.project = std::move(*project);
            return {};
        }
    }
    return grant_covers(token, declared.needs, request.project);
}

}  // namespace wheelhouse::app
