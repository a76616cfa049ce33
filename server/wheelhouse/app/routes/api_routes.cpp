#include "wheelhouse/app/routes/api_routes.hpp"

#include <memory>
#include <string>

#include "wheelhouse/app/answers.hpp"
#include "wheelhouse/app/page_response.hpp"
#include "wheelhouse/catalog/catalog.hpp"
#include "wheelhouse/http/conditional.hpp"
#include "wheelhouse/pep503/name.hpp"
#include "wheelhouse/render/variant_matrix.hpp"

namespace wheelhouse::app {

route_answer project_variants(route_context& context, route_request& request) {
    const auto& header = request.header();
    const auto requested = request.capture("project");
    if (!pep503::is_valid_project_name(requested)) {
        return request.refuse(make_error(error_kind::not_found, "'" + std::string(requested) +
                                                                            "' is not a valid project name (PEP 508)"));
    }
    const auto name = pep503::normalize(requested);
    const auto found = context.catalog.files_of_project(name);
    if (!found) return request.refuse(found.error());
    if (!*found) return request.refuse(make_error(error_kind::not_found, "no project named '" + name + "' in this index"));
    render::link_options links;
    links.files_base = context.settings.files_base;
    auto body = render::variant_matrix_json((*found)->project, (*found)->files, links);
    rendered_page page{nullptr, http_conditional::strong_entity_tag(body)};
    page.body = std::make_shared<const std::string>(std::move(body));
    // Built fresh on every request: an administrator's view, rarely asked for and always current.
    return respond_with_page(header, page, "application/json", "no-cache", false);
}

}  // namespace wheelhouse::app
