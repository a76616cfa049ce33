#include "wheelhouse/app/routes/admin_routes.hpp"

#include <charconv>
#include <fstream>

#include <boost/json.hpp>

#include "wheelhouse/app/answers.hpp"
#include "wheelhouse/app/json_body.hpp"
#include "wheelhouse/auth/token_store.hpp"
#include "wheelhouse/catalog/audit.hpp"
#include "wheelhouse/catalog/catalog.hpp"
#include "wheelhouse/catalog/download_counter.hpp"
#include "wheelhouse/catalog/project_search.hpp"
#include "wheelhouse/ingest/ingester.hpp"
#include "wheelhouse/pep503/name.hpp"
#include "wheelhouse/render/admin_json.hpp"
#include "wheelhouse/storage/blob_store.hpp"

namespace wheelhouse::app::admin {
namespace {

namespace json = boost::json;

constexpr std::size_t max_reason_length = 1000;
constexpr std::uint64_t max_metadata_bytes = 1 << 20;
constexpr std::int64_t max_audit_entries = 1000;
constexpr std::int64_t history_entries = 50;

route_answer ok(const route_request& request, std::string body, http::status status = http::status::ok) {
    return json_response(request.header(), status, std::move(body));
}

// The name of the token that asked, for the audit log (every route here needs one).
const std::string& actor(const route_request& request) { return request.grant->name; }

error no_such_file(std::string_view filename) {
    return make_error(error_kind::not_found, "no file named " + std::string(filename) +
                                                 " in this index; it may have been deleted since the page was loaded");
}

error no_such_project(std::string_view name) {
    return make_error(error_kind::not_found, "no project named '" + std::string(name) + "' in this index");
}

// A write's not_found in the words of the page that asked for it; other errors as they are.
error explained(const error& failure, const error& missing) {
    return failure.kind == error_kind::not_found ? missing : failure;
}

result<std::int64_t> query_integer(const http_target::request_target& target, std::string_view key,
                                   std::int64_t fallback, std::int64_t low, std::int64_t high) {
    const auto text = target.query_value(key);
    if (!text || text->empty()) return fallback;
    std::int64_t value = 0;
    const auto [end, ec] = std::from_chars(text->data(), text->data() + text->size(), value);
    if (ec != std::errc{} || end != text->data() + text->size() || value < low || value > high) {
        return invalid("'" + std::string(key) + "' is '" + std::string(*text) + "'; give a whole number from " +
                       std::to_string(low) + " to " + std::to_string(high));
    }
    return value;
}

// The project a route names, checked as a PEP 508 name and normalised.
result<std::string> project_name(std::string_view requested) {
    if (!pep503::is_valid_project_name(requested))
        return make_error(error_kind::not_found, "'" + std::string(requested) + "' is not a valid project name (PEP 508)");
    return pep503::normalize(requested);
}

std::optional<std::string> read_metadata(const storage::blob_store& blobs, std::string_view sha256) {
    std::ifstream in(blobs.metadata_path(sha256), std::ios::binary);
    if (!in) return std::nullopt;
    std::string text(max_metadata_bytes, '\0');
    in.read(text.data(), static_cast<std::streamsize>(text.size()));
    text.resize(static_cast<std::size_t>(in.gcount()));
    return text;
}

json::object file_state(const catalog::file_record& file) {
    json::object state{{"filename", file.filename}, {"project", file.project}};
    if (file.yanked()) state["yanked"] = *file.yanked_reason;
    else state["yanked"] = false;
    return state;
}

render::link_options links_of(const route_context& context) {
    render::link_options links;
    links.files_base = context.settings.files_base;
    return links;
}

// cuda=, torch=, sm=, rocm=, python=, kind= and lacks= of the project list.
result<catalog::build_filter> build_filter_of(const http_target::request_target& target) {
    catalog::build_filter_text text;
    text.cuda = target.query_value("cuda").value_or("");
    text.torch = target.query_value("torch").value_or("");
    text.sm = target.query_value("sm").value_or("");
    text.rocm = target.query_value("rocm").value_or("");
    text.python = target.query_value("python").value_or("");
    text.kind = target.query_value("kind").value_or("");
    const auto lacks = target.query_value("lacks").value_or("");
    if (lacks == "1" || lacks == "true") text.lacks = true;
    else if (!lacks.empty() && lacks != "0" && lacks != "false")
        return invalid("lacks is '" + std::string(lacks) + "'; give lacks=1 for the projects without such a build");
    return catalog::parse_build_filter(text);
}

result<catalog::project_query> project_query_of(const route_request& request) {
    const auto& target = request.target;
    catalog::project_query query;
    query.search = std::string(target.query_value("q").value_or(""));
    auto page = query_integer(target, "page", 1, 1, 1'000'000'000);
    if (!page) return page.error();
    auto per_page = query_integer(target, "per_page", 50, 1, catalog::max_per_page);
    if (!per_page) return per_page.error();
    query.page = *page;
    query.per_page = *per_page;
    if (const auto sort = target.query_value("sort"); sort && !sort->empty()) {
        auto parsed = catalog::parse_project_sort(*sort);
        if (!parsed) return parsed.error();
        query.sort = *parsed;
    }
    auto builds = build_filter_of(target);
    if (!builds) return builds.error();
    query.builds = std::move(*builds);
    query.visible = request.visible;
    return query;
}

// A yank or un-yank: {"reason"} from the body, then the catalog's write.
route_answer change_yank(route_context& context, route_request& request, bool yank) {
    const std::string filename(request.capture("filename"));
    auto body = body_object(request.incoming.body, R"({"reason": "broken on sm120"})");
    if (!body) return request.refuse(body.error());
    auto reason = optional_text(*body, "reason", max_reason_length);
    if (!reason) return request.refuse(reason.error());
    auto changed = yank ? context.catalog.yank(filename, reason->value_or(""), actor(request))
                        : context.catalog.unyank(filename, actor(request), *reason);
    if (!changed) return request.refuse(explained(changed.error(), no_such_file(filename)));
    return ok(request, json::serialize(file_state(*changed)));
}

// The "projects" of a token to create: names or globs; "*" alone means every project.
result<std::vector<std::string>> token_projects(const json::object& body) {
    std::vector<std::string> patterns;
    const auto* projects = body.if_contains("projects");
    if (projects == nullptr || projects->is_null()) return patterns;
    if (!projects->is_array()) return invalid("'projects' must be a list of project names or globs");
    for (const auto& item : projects->as_array()) {
        if (!item.is_string()) return invalid("'projects' must be a list of project names or globs");
        if (item.as_string() != "*") patterns.emplace_back(item.as_string());
    }
    return patterns;
}

result<std::optional<std::chrono::seconds>> token_lifetime(const json::object& body) {
    const auto* days = body.if_contains("expires_in_days");
    if (days == nullptr || days->is_null()) return std::optional<std::chrono::seconds>();
    if (!days->is_int64() || days->as_int64() < 1 || days->as_int64() > 3650)
        return invalid("'expires_in_days' must be a whole number from 1 to 3650, or null for no expiry");
    return std::optional(std::chrono::seconds(days->as_int64() * 86'400));
}

}  // namespace

route_answer list_projects(route_context& context, route_request& request) {
    auto query = project_query_of(request);
    if (!query) return request.refuse(query.error());
    auto found = catalog::search_projects(context.catalog, *query);
    if (!found) return request.refuse(found.error());
    return ok(request, render::project_list_json(*found, *query));
}

route_answer list_build_words(route_context& context, route_request& request) {
    auto words = catalog::words_of_builds(context.catalog, request.visible);
    if (!words) return request.refuse(words.error());
    return ok(request, render::build_words_json(*words));
}

route_answer project_detail(route_context& context, route_request& request) {
    auto project = project_name(request.capture("project"));
    if (!project) return request.refuse(project.error());
    auto found = context.catalog.files_of_project(*project);
    if (!found) return request.refuse(found.error());
    if (!*found) return request.refuse(no_such_project(*project));
    return ok(request, render::project_detail_json((*found)->project, (*found)->files, links_of(context)));
}

route_answer set_project_status(route_context& context, route_request& request) {
    auto project = project_name(request.capture("project"));
    if (!project) return request.refuse(project.error());
    auto body = body_object(request.incoming.body, R"({"status": "archived", "reason": "superseded by flash-attn-3"})");
    if (!body) return request.refuse(body.error());
    const auto* status_value = body->if_contains("status");
    if (status_value == nullptr || !status_value->is_string())
        return request.refuse(invalid("give the new status: {\"status\": \"active\" | \"archived\" | \"quarantined\" | \"deprecated\"}"));
    const auto status = catalog::parse_project_status(status_value->as_string());
    if (!status) {
        return request.refuse(invalid("status '" + std::string(status_value->as_string()) +
                                     "' is not one of active, archived, quarantined, deprecated (PEP 792)"));
    }
    auto reason = optional_text(*body, "reason", max_reason_length);
    if (!reason) return request.refuse(reason.error());
    auto changed = context.catalog.set_project_status(*project, *status, *reason, actor(request));
    if (!changed) return request.refuse(explained(changed.error(), no_such_project(*project)));
    json::object out{{"name", changed->name},
                     {"status", catalog::to_string(changed->status)},
                     {"status_reason", changed->status_reason ? json::value(*changed->status_reason) : nullptr}};
    return ok(request, json::serialize(out));
}

route_answer file_detail(route_context& context, route_request& request) {
    const std::string filename(request.capture("filename"));
    auto found = context.catalog.find_file(filename);
    if (!found) return request.refuse(found.error());
    if (!*found) return request.refuse(no_such_file(filename));
    render::file_detail detail;
    detail.file = std::move(**found);
    auto project = context.catalog.find_project(detail.file.project);
    if (!project) return request.refuse(project.error());
    if (*project) detail.project = std::move(**project);
    detail.metadata_text = read_metadata(context.blobs, detail.file.sha256);
    auto read = context.catalog.read_snapshot([&](sqlite::connection& db) -> result<void> {
        auto downloads = catalog::read_downloads(db, detail.file.id);
        if (!downloads) return downloads.error();
        detail.downloads = std::move(*downloads);
        catalog::audit_query about_file;
        about_file.target = filename;
        about_file.per_page = history_entries;
        auto history = catalog::read_audit(db, about_file);
        if (!history) return history.error();
        detail.history = std::move(history->entries);
        return {};
    });
    if (!read) return request.refuse(read.error());
    return ok(request, render::file_detail_json(detail, links_of(context)));
}

route_answer yank_file(route_context& context, route_request& request) { return change_yank(context, request, true); }

route_answer unyank_file(route_context& context, route_request& request) {
    return change_yank(context, request, false);
}

route_answer delete_file(route_context& context, route_request& request) {
    const std::string filename(request.capture("filename"));
    auto removed = context.ingester.delete_file(filename, actor(request));
    if (!removed) return request.refuse(explained(removed.error(), no_such_file(filename)));
    const auto still_there = context.blobs.has_owned(removed->sha256);  // in the bucket, when there is one
    json::object out{{"deleted", removed->filename},
                     {"project", removed->project},
                     {"sha256", removed->sha256},
                     {"blob_removed", still_there && !*still_there && !context.blobs.has_blob(removed->sha256)}};
    return ok(request, json::serialize(out));
}

route_answer list_tokens(route_context& context, route_request& request) {
    auto tokens = context.tokens.list();
    if (!tokens) return request.refuse(tokens.error());
    return ok(request, render::token_list_json(*tokens, catalog::now_ms()));
}

route_answer create_token(route_context& context, route_request& request) {
    auto body = body_object(request.incoming.body, R"({"name": "ci-flash-attn", "scope": "upload", "projects": ["flash-attn"]})");
    if (!body) return request.refuse(body.error());
    auto name = optional_text(*body, "name", 100);
    if (!name) return request.refuse(name.error());
    if (!*name) return request.refuse(invalid("give the token a name: {\"name\": \"ci-flash-attn\", \"scope\": \"upload\"}"));
    auto scope_text = optional_text(*body, "scope", 20);
    if (!scope_text) return request.refuse(scope_text.error());
    auto granted = auth::parse_scope(scope_text->value_or("upload"));
    if (!granted) return request.refuse(granted.error());
    auto patterns = token_projects(*body);
    if (!patterns) return request.refuse(patterns.error());
    auto lifetime = token_lifetime(*body);
    if (!lifetime) return request.refuse(lifetime.error());
    auto created = context.tokens.create(**name, *granted, *patterns, *lifetime, actor(request));
    if (!created) return request.refuse(created.error());
    json::object out{{"token", render::token_json(created->record, catalog::now_ms())}, {"secret", created->secret}};
    return ok(request, json::serialize(out), http::status::created);
}

route_answer revoke_token(route_context& context, route_request& request) {
    auto revoked = context.tokens.revoke(request.capture("name"), actor(request));
    if (!revoked) return request.refuse(revoked.error());
    return ok(request, json::serialize(render::token_json(*revoked, catalog::now_ms())));
}

route_answer read_audit(route_context& context, route_request& request) {
    const auto& target = request.target;
    catalog::audit_query query;
    // limit= is per_page's first name, kept for scripts that use it.
    const bool old_name = target.query_value("limit").has_value() && !target.query_value("per_page");
    auto per_page = query_integer(target, old_name ? "limit" : "per_page", 100, 1, max_audit_entries);
    if (!per_page) return request.refuse(per_page.error());
    auto page = query_integer(target, "page", 1, 1, 1'000'000'000);
    if (!page) return request.refuse(page.error());
    query.per_page = *per_page;
    query.page = *page;
    if (const auto wanted = target.query_value("target"); wanted && !wanted->empty()) query.target = std::string(*wanted);
    query.actor = std::string(target.query_value("actor").value_or(""));
    query.action = std::string(target.query_value("action").value_or(""));
    query.search = std::string(target.query_value("q").value_or(""));
    catalog::audit_page found;
    auto read = context.catalog.read_snapshot([&](sqlite::connection& db) -> result<void> {
        auto entries = catalog::read_audit(db, query);
        if (!entries) return entries.error();
        found = std::move(*entries);
        return {};
    });
    if (!read) return request.refuse(read.error());
    return ok(request, render::audit_json(found, query));
}

}  // namespace wheelhouse::app::admin
