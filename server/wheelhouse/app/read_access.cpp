#include "wheelhouse/app/read_access.hpp"

#include "wheelhouse/app/authorization.hpp"
#include "wheelhouse/pep427/wheel_filename.hpp"
#include "wheelhouse/pep503/name.hpp"

namespace wheelhouse::app {
namespace {

std::string normalized(std::string_view name) {
    return pep503::normalize(name);
}

}  // namespace

std::string project_read_by(const http_target::request_target& target) {
    const auto& segments = target.segments;
    auto at = [&](std::size_t index) -> std::string_view {
        return index < segments.size() ? std::string_view(segments[index]) : std::string_view{};
    };
    if (at(0) == "simple") return normalized(at(1));
    if (at(0) == "variants") return normalized(at(3));
    if (at(0) == "api" && at(2) == "projects") return normalized(at(3));
    if (at(0) == "files") {
        auto filename = at(2);
        if (filename.ends_with(".metadata")) filename.remove_suffix(std::string_view(".metadata").size());
        auto parsed = pep427::parse_wheel_filename(filename);
        return parsed ? parsed->normalized_name : std::string();
    }
    return {};
}

result<void> check_read_access(const auth::token_store& tokens, const http::request_header<>& request,
                               std::string_view project) {
    static constexpr access_rule read_rule{
        auth::scope::read, "reads of this private index",
        "put a token in the index URL, e.g. pip install --index-url http://__token__:<token>@<host>/simple/ "
        "<project> (an admin creates one with: wheelhouse token create --name <who> --scope read)"};
    auto grant = authorize(tokens, request, read_rule);
    if (!grant) return grant.error();
    if (auth::permits(*grant, auth::scope::read, project)) return {};
    if (project.empty()) {
        return make_error(error_kind::forbidden, "token '" + grant->name +
                                                     "' is limited to some projects, so it may not read the list "
                                                     "of every project; ask for a project's page instead");
    }
    return make_error(error_kind::forbidden,
                      "token '" + grant->name + "' may not read project '" + std::string(project) + "'");
}

}  // namespace wheelhouse::app
