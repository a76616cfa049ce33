#include "wheelhouse/app/simple_routes.hpp"

#include <string>
#include <vector>

#include <spdlog/spdlog.h>

#include "wheelhouse/app/page_response.hpp"
#include "wheelhouse/catalog/catalog.hpp"
#include "wheelhouse/pep503/name.hpp"
#include "wheelhouse/pep691/negotiation.hpp"
#include "wheelhouse/render/simple_pages.hpp"
#include "wheelhouse/transport/responses.hpp"

namespace wheelhouse::app {
namespace {

using transport::make_text_response;

using rendered = result<std::optional<std::string>>;

rendered render_project_list(const route_context& context, pep691::page_format format) {
    const auto projects = context.catalog.list_projects();
    if (!projects) return projects.error();
    std::vector<render::project_listing> listing;
    listing.reserve(projects->size());
    for (const auto& entry : *projects) listing.push_back({entry.project.name, entry.project.display_name});
    return std::optional(format == pep691::page_format::json ? render::project_list_json(listing)
                                                             : render::project_list_html(listing));
}

rendered render_project(const route_context& context, const std::string& name, pep691::page_format format) {
    const auto found = context.catalog.files_of_project(name);
    if (!found) return found.error();
    if (!*found) return std::optional<std::string>();
    const auto& [project, files] = **found;
    render::link_options links;
    links.files_base = context.settings.files_base;
    return std::optional(format == pep691::page_format::json ? render::project_page_json(project, files, links)
                                                             : render::project_page_html(project, files, links));
}

transport::outgoing_response internal_error(const http::request_header<>& request, const error& failure) {
    spdlog::error("{} {}: {}", request.method_string(), request.target(), failure.message);
    return make_text_response(request, http::status::internal_server_error,
                              "the index could not read its catalog; the administrator has the details in the log");
}

}  // namespace

transport::outgoing_response serve_simple(const route_context& context, const http::request_header<>& request,
                                          const http_target::request_target& target, std::string_view prefix,
                                          std::size_t first_segment) {
    const auto& segments = target.segments;
    const std::size_t rest = segments.size() - first_segment;
    if (rest == 0) return redirect_permanently(request, std::string(prefix));

    std::optional<pep691::media_choice> choice;
    if (const auto format = target.query_value("format")) {
        choice = pep691::choose_by_format_parameter(*format);
        if (!choice) {
            return make_text_response(request, http::status::bad_request,
                                      "unknown format '" + std::string(*format) +
                                          "'; use format=json or format=html");
        }
    } else {
        const auto accept = request[http::field::accept];
        choice = pep691::negotiate(accept);
        if (choice && choice->format == pep691::page_format::json &&
            pep691::prefers_html_for_core_metadata(request[http::field::user_agent])) {
            if (auto html = pep691::negotiate(accept, true)) choice = html;
        }
        if (!choice) {
            return make_text_response(request, http::status::not_acceptable,
                                      "this index serves application/vnd.pypi.simple.v1+json, "
                                      "application/vnd.pypi.simple.v1+html and text/html; the Accept header "
                                      "allows none of them");
        }
    }
    const std::string cache_control = "max-age=" + std::to_string(context.settings.page_max_age.count()) + ", public";
    // Pages chosen by ?format= do not depend on Accept.
    const bool vary_accept = !target.query_value("format").has_value();

    if (rest == 1 && segments[first_segment].empty()) {
        const auto page = context.pages.get_or_render({"", "", choice->format}, [&] {
            return render_project_list(context, choice->format);
        });
        if (!page) return internal_error(request, page.error());
        return respond_with_page(request, **page, choice->content_type, cache_control, vary_accept);
    }

    const auto& requested = segments[first_segment];
    const bool well_formed = rest == 1 || (rest == 2 && segments[first_segment + 1].empty());
    if (!well_formed || !pep503::is_valid_project_name(requested)) {
        return make_text_response(request, http::status::not_found,
                                  "no such page; project pages are at " + std::string(prefix) + "<project>/");
    }
    const auto normalized = pep503::normalize(requested);
    if (rest == 1 || normalized != requested)
        return redirect_permanently(request, std::string(prefix) + normalized + "/");

    const auto page = context.pages.get_or_render({"", normalized, choice->format}, [&] {
        return render_project(context, normalized, choice->format);
    });
    if (!page) return internal_error(request, page.error());
    if (!*page) {
        return make_text_response(request, http::status::not_found,
                                  "no project named '" + normalized + "' in this index");
    }
    return respond_with_page(request, **page, choice->content_type, cache_control, vary_accept);
}

}  // namespace wheelhouse::app
