#include "wheelhouse/app/api_routes.hpp"

#include <memory>
#include <string>

#include "wheelhouse/app/error_response.hpp"
#include "wheelhouse/app/page_response.hpp"
#include "wheelhouse/catalog/catalog.hpp"
#include "wheelhouse/pep503/name.hpp"
#include "wheelhouse/render/variant_matrix.hpp"
#include "wheelhouse/transport/responses.hpp"

namespace wheelhouse::app {
namespace {

using transport::make_text_response;

constexpr std::string_view json_type = "application/json";

bool is_read(http::verb method) { return method == http::verb::get || method == http::verb::head; }

transport::outgoing_response no_such_route(const http::request_header<>& request) {
    return make_text_response(request, http::status::not_found,
                              "no such API route; see /api/v1/projects/<project>/variants");
}

// The segments after "/api/v1/", without the trailing empty one a final '/' leaves.
std::span<const std::string> route_of(const http_target::request_target& target) {
    std::span<const std::string> route(target.segments);
    route = route.subspan(2);
    if (!route.empty() && route.back().empty()) route = route.first(route.size() - 1);
    return route;
}

}  // namespace

transport::outgoing_response serve_api(const route_context& context, const http::request_header<>& request,
                                       const http_target::request_target& target) {
    const auto& segments = target.segments;
    if (segments.size() < 3 || segments[1] != "v1") return no_such_route(request);
    if (segments[2] == "projects") return serve_api_projects(context, request, target);
    return no_such_route(request);
}

transport::outgoing_response serve_api_projects(const route_context& context, const http::request_header<>& request,
                                                const http_target::request_target& target) {
    const auto route = route_of(target);  // "projects", <project>, "variants"
    if (route.size() != 3 || route[2] != "variants") return no_such_route(request);
    if (!is_read(request.method())) {
        http::fields headers;
        headers.set(http::field::allow, "GET, HEAD");
        return make_text_response(request, http::status::method_not_allowed,
                                  std::string(request.method_string()) + " is not allowed here; use GET, HEAD",
                                  std::move(headers));
    }
    const auto& requested = route[1];
    if (!pep503::is_valid_project_name(requested)) {
        return make_text_response(request, http::status::not_found,
                                  "'" + requested + "' is not a valid project name (PEP 508)");
    }
    const auto name = pep503::normalize(requested);
    const auto found = context.catalog.files_of_project(name);
    if (!found) return error_response(request, found.error());
    if (!*found) {
        return make_text_response(request, http::status::not_found, "no project named '" + name + "' in this index");
    }
    render::link_options links;
    links.files_base = context.settings.files_base;
    auto body = render::variant_matrix_json((*found)->project, (*found)->files, links);
    rendered_page page{nullptr, entity_tag_for(body)};
    page.body = std::make_shared<const std::string>(std::move(body));
    // Built fresh on every request: an administrator's view, rarely asked for and always current.
    return respond_with_page(request, page, json_type, "no-cache", false);
}

}  // namespace wheelhouse::app
