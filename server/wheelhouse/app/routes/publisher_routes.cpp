#include "wheelhouse/app/routes/publisher_routes.hpp"

#include <charconv>

#include <boost/json.hpp>

#include "wheelhouse/app/answers.hpp"
#include "wheelhouse/app/json_body.hpp"
#include "wheelhouse/oidc/publisher_store.hpp"
#include "wheelhouse/pep503/name.hpp"
#include "wheelhouse/render/admin_json.hpp"

namespace wheelhouse::app::publishers {
namespace {

namespace json = boost::json;

constexpr std::string_view example =
    R"({"kind": "github", "repository": "OWNER/REPO", "owner_id": "123456", "workflow": "release.yml"})";

result<std::string> project_of(const route_request& request) {
    const auto name = request.capture("project");
    if (!pep503::is_valid_project_name(name))
        return make_error(error_kind::not_found, "'" + std::string(name) + "' is not a valid project name (PEP 508)");
    return pep503::normalize(name);
}

// A text field, or "" when absent; owner_id may be a JSON number too, as GitHub's API gives it.
result<std::string> field(const json::object& body, std::string_view key) {
    if (const auto* value = body.if_contains(key); value && (value->is_int64() || value->is_uint64()))
        return json::serialize(*value);
    auto text = optional_text(body, key, 255);
    if (!text) return text.error();
    return text->value_or("");
}

result<oidc::publisher> publisher_of(const json::object& body, std::string project) {
    oidc::publisher draft;
    draft.project = std::move(project);
    auto kind = field(body, "kind");
    if (!kind) return kind.error();
    auto parsed_kind = oidc::parse_publisher_kind(kind->empty() ? "github" : *kind);
    if (!parsed_kind) return parsed_kind.error();
    draft.kind = *parsed_kind;
    std::string* fields[] = {&draft.issuer, &draft.repository, &draft.owner_id, &draft.workflow, &draft.environment,
                             &draft.label_pattern};
    constexpr std::string_view keys[] = {"issuer", "repository", "owner_id", "workflow", "environment", "label_pattern"};
    for (std::size_t i = 0; i < std::size(keys); ++i) {
        auto value = field(body, keys[i]);
        if (!value) return value.error();
        *fields[i] = std::move(*value);
    }
    if (draft.repository.empty() || draft.workflow.empty())
        return invalid("give at least the repository, its owner's id and the workflow: " + std::string(example));
    return draft;
}

}  // namespace

route_answer list_publishers(route_context& context, route_request& request) {
    auto project = project_of(request);
    if (!project) return request.refuse(project.error());
    auto found = context.publishers.list(*project);
    if (!found) return request.refuse(found.error());
    return json_response(request.header(), http::status::ok,
                         render::publisher_list_json(*project, context.settings.publishing.audience,
                                                     context.settings.publishing.token_lifetime, *found));
}

route_answer add_publisher(route_context& context, route_request& request) {
    auto project = project_of(request);
    if (!project) return request.refuse(project.error());
    auto body = body_object(request.incoming.body, example);
    if (!body) return request.refuse(body.error());
    auto draft = publisher_of(*body, *project);
    if (!draft) return request.refuse(draft.error());
    auto added = context.publishers.add(*draft, request.grant->name);
    if (!added) return request.refuse(added.error());
    return json_response(request.header(), http::status::created, json::serialize(render::publisher_json(*added)));
}

route_answer remove_publisher(route_context& context, route_request& request) {
    auto project = project_of(request);
    if (!project) return request.refuse(project.error());
    const auto id_text = request.capture("id");
    std::int64_t id = 0;
    const auto [end, ec] = std::from_chars(id_text.data(), id_text.data() + id_text.size(), id);
    if (ec != std::errc{} || end != id_text.data() + id_text.size())
        return request.refuse(make_error(error_kind::not_found, "'" + std::string(id_text) + "' is no publisher id; the "
                                                               "list gives each publisher's \"id\""));
    auto removed = context.publishers.remove(id, *project, request.grant->name);
    if (!removed) return request.refuse(removed.error());
    json::object out{{"removed", render::publisher_json(removed->removed)}, {"tokens_revoked", removed->tokens_revoked}};
    return json_response(request.header(), http::status::ok, json::serialize(out));
}

}  // namespace wheelhouse::app::publishers
