#include "wheelhouse/app/admin_routes.hpp"

#include <charconv>
#include <fstream>
#include <span>

#include <boost/json.hpp>
#include <spdlog/spdlog.h>

#include "wheelhouse/app/authorization.hpp"
#include "wheelhouse/catalog/audit.hpp"
#include "wheelhouse/catalog/catalog.hpp"
#include "wheelhouse/catalog/download_counter.hpp"
#include "wheelhouse/catalog/project_search.hpp"
#include "wheelhouse/pep503/name.hpp"
#include "wheelhouse/render/admin_json.hpp"
#include "wheelhouse/storage/blob_store.hpp"
#include "wheelhouse/transport/responses.hpp"

namespace wheelhouse::app {
namespace {

namespace json = boost::json;
using transport::outgoing_response;

constexpr std::uint64_t max_body_bytes = 64 * 1024;
constexpr std::size_t max_reason_length = 1000;
constexpr std::uint64_t max_metadata_bytes = 1 << 20;
constexpr std::int64_t max_audit_entries = 1000;
constexpr std::int64_t history_entries = 50;
constexpr std::chrono::seconds retry_after{2};
constexpr std::string_view how_to_send =
    "send 'Authorization: Bearer <token>' with a token of scope admin (wheelhouse token create NAME --scope admin)";

bool is_read(http::verb method) { return method == http::verb::get || method == http::verb::head; }

// The segments after "/api/v1/", without the trailing empty one a final '/' leaves.
std::span<const std::string> route_of(const http_target::request_target& target) {
    std::span<const std::string> route(target.segments);
    route = route.subspan(2);
    if (!route.empty() && route.back().empty()) route = route.first(route.size() - 1);
    return route;
}

outgoing_response json_answer(const http::request_header<>& request, http::status status, std::string body,
                              http::fields extra = {}) {
    extra.set(http::field::cache_control, "no-store");
    extra.set("X-Content-Type-Options", "nosniff");
    body.push_back('\n');
    return transport::make_shared_response(request, status, "application/json",
                                           std::make_shared<const std::string>(std::move(body)), std::move(extra));
}

outgoing_response json_error(const http::request_header<>& request, const error& failure, http::fields extra = {}) {
    std::string message = failure.message;
    if (failure.kind == error_kind::internal) {
        spdlog::error("{} {}: {}", request.method_string(), request.target(), failure.message);
        message = "the index failed to answer this request; the administrator has the details in the log";
    }
    // Bearer, not Basic: a Basic challenge would make browsers open their own password dialog.
    if (failure.kind == error_kind::unauthorized) extra.set(http::field::www_authenticate, "Bearer realm=\"wheelhouse\"");
    return json_answer(request, transport::status_for(failure.kind), json::serialize(json::object{{"error", message}}),
                       std::move(extra));
}

outgoing_response method_not_allowed(const http::request_header<>& request, std::string_view allow) {
    http::fields headers;
    headers.set(http::field::allow, allow);
    return json_answer(request, http::status::method_not_allowed,
                       json::serialize(json::object{{"error", std::string(request.method_string()) +
                                                                  " is not allowed here; use " + std::string(allow)}}),
                       std::move(headers));
}

error no_such_file(std::string_view filename) {
    return make_error(error_kind::not_found, "no file named " + std::string(filename) +
                                                 " in this index; it may have been deleted since the page was loaded");
}

error no_such_project(std::string_view name) {
    return make_error(error_kind::not_found, "no project named '" + std::string(name) + "' in this index");
}

// A request body as a JSON object; an empty body is an empty object.
result<json::object> body_object(const std::string& body, std::string_view example) {
    if (body.empty()) return json::object{};
    boost::system::error_code ec;
    auto parsed = json::parse(body, ec);
    if (ec) return invalid("the body is not JSON (" + ec.message() + "); send an object such as " + std::string(example));
    if (!parsed.is_object()) return invalid("the body must be a JSON object such as " + std::string(example));
    return std::move(parsed.as_object());
}

// A text field that may be absent or null; one line, at most `max_length` bytes.
result<std::optional<std::string>> optional_text(const json::object& body, std::string_view key,
                                                 std::size_t max_length) {
    const auto* value = body.if_contains(key);
    if (value == nullptr || value->is_null()) return std::optional<std::string>();
    if (!value->is_string()) return invalid("'" + std::string(key) + "' must be a string");
    std::string text(value->as_string());
    if (text.size() > max_length) {
        return invalid("'" + std::string(key) + "' is " + std::to_string(text.size()) + " bytes; at most " +
                       std::to_string(max_length) + " are kept");
    }
    for (const char c : text) {
        if (static_cast<unsigned char>(c) < 0x20 || c == 0x7F)
            return invalid("'" + std::string(key) + "' must be one line without control characters");
    }
    return std::optional(std::move(text));
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

}  // namespace

admin_routes::admin_routes(route_context& context, auth::token_store& tokens, concurrency::worker_pool& workers)
    : context_(context), tokens_(tokens), workers_(workers), ingester_(context.catalog, context.blobs) {}

bool admin_routes::claims(http::verb method, const http_target::request_target& target) {
    const auto& segments = target.segments;
    if (segments.size() < 3 || segments[0] != "api" || segments[1] != "v1") return false;
    const auto route = route_of(target);
    if (route.empty()) return false;
    const auto& resource = route[0];
    if (resource == "projects") return route.size() <= 2 || (route.size() == 3 && route[2] == "status");
    if (resource == "files") {
        if (route.size() == 2) return method != http::verb::put && !route[1].empty();  // PUT is the raw upload
        return route.size() == 3 && (route[2] == "yank" || route[2] == "unyank");
    }
    if (resource == "tokens") return route.size() <= 2;
    if (resource == "audit") return route.size() == 1;
    return false;
}

transport::body_plan admin_routes::plan(const http::request_header<>& request) const {
    transport::body_plan plan;
    if (is_read(request.method())) return plan;
    plan.how = transport::body_plan::kind::in_memory;
    plan.limit = max_body_bytes;
    return plan;
}

void admin_routes::handle(transport::incoming_request request, const http_target::request_target& target,
                          const transport::responder& respond) {
    const auto& header = request.header;
    const auto method = header.method();
    const auto route = route_of(target);
    const std::string resource = route[0];
    const std::string name = route.size() > 1 ? route[1] : std::string();
    const std::string action = route.size() > 2 ? route[2] : std::string();

    // An admin grant allowed to act on `project` ("" for the whole index).
    auto admin_grant = [&](std::string_view what, std::string_view project) -> result<auth::token_grant> {
        auto grant = authorize(tokens_, header, access_rule{auth::scope::admin, what, how_to_send});
        if (!grant) return grant;
        if (auth::permits(*grant, auth::scope::admin, project)) return grant;
        if (project.empty()) {
            return make_error(error_kind::forbidden, "token '" + grant->name + "' is limited to some projects; " +
                                                         std::string(what) + " need an admin token for every project");
        }
        return make_error(error_kind::forbidden,
                          "token '" + grant->name + "' may not change project '" + std::string(project) + "'");
    };
    // Runs a catalog write on the worker pool and answers from there; 503 when the pool is full.
    auto submit = [&](std::string token, std::function<outgoing_response()> work) {
        auto job = [this, respond, token = std::move(token), work = std::move(work)] {
            auto response = work();
            if (response.status < 300) {
                if (auto used = tokens_.mark_used(token); !used) spdlog::warn("token '{}': {}", token, used.error().message);
            }
            respond(std::move(response));
        };
        if (!workers_.try_submit(concurrency::job(std::move(job)))) {
            http::fields retry;
            retry.set(http::field::retry_after, std::to_string(retry_after.count()));
            respond(json_error(header, make_error(error_kind::unavailable, "the index is busy with uploads; retry shortly"),
                               std::move(retry)));
        }
    };
    auto fail = [&](const error& failure) { respond(json_error(header, failure)); };

    if (resource == "projects" && route.size() == 1) {
        if (!is_read(method)) return respond(method_not_allowed(header, "GET, HEAD"));
        catalog::project_query query;
        query.search = std::string(target.query_value("q").value_or(""));
        auto page = query_integer(target, "page", 1, 1, 1'000'000'000);
        if (!page) return fail(page.error());
        auto per_page = query_integer(target, "per_page", 50, 1, catalog::max_per_page);
        if (!per_page) return fail(per_page.error());
        query.page = *page;
        query.per_page = *per_page;
        if (const auto sort = target.query_value("sort"); sort && !sort->empty()) {
            auto parsed = catalog::parse_project_sort(*sort);
            if (!parsed) return fail(parsed.error());
            query.sort = *parsed;
        }
        auto found = catalog::search_projects(context_.catalog, query);
        if (!found) return fail(found.error());
        return respond(json_answer(header, http::status::ok, render::project_list_json(*found, query)));
    }

    if (resource == "projects") {
        auto project = project_name(name);
        if (!project) return fail(project.error());
        if (route.size() == 2) {
            if (!is_read(method)) return respond(method_not_allowed(header, "GET, HEAD"));
            auto found = context_.catalog.files_of_project(*project);
            if (!found) return fail(found.error());
            if (!*found) return fail(no_such_project(*project));
            render::link_options links;
            links.files_base = context_.settings.files_base;
            return respond(json_answer(header, http::status::ok,
                                       render::project_detail_json((*found)->project, (*found)->files, links)));
        }
        // projects/<project>/status
        if (method != http::verb::put && method != http::verb::post) return respond(method_not_allowed(header, "PUT, POST"));
        auto grant = admin_grant("project status changes", *project);
        if (!grant) return fail(grant.error());
        auto body = body_object(request.body, R"({"status": "archived", "reason": "superseded by flash-attn-3"})");
        if (!body) return fail(body.error());
        const auto* status_value = body->if_contains("status");
        if (status_value == nullptr || !status_value->is_string())
            return fail(invalid("give the new status: {\"status\": \"active\" | \"archived\" | \"quarantined\" | \"deprecated\"}"));
        const auto status = catalog::parse_project_status(status_value->as_string());
        if (!status) {
            return fail(invalid("status '" + std::string(status_value->as_string()) +
                                "' is not one of active, archived, quarantined, deprecated (PEP 792)"));
        }
        auto reason = optional_text(*body, "reason", max_reason_length);
        if (!reason) return fail(reason.error());
        return submit(grant->name, [this, header, project = *project, status = *status, reason = *reason,
                                    actor = grant->name] {
            auto changed = context_.catalog.set_project_status(project, status, reason, actor);
            if (!changed) {
                if (changed.error().kind == error_kind::not_found) return json_error(header, no_such_project(project));
                return json_error(header, changed.error());
            }
            json::object out{{"name", changed->name},
                             {"status", catalog::to_string(changed->status)},
                             {"status_reason", changed->status_reason ? json::value(*changed->status_reason) : nullptr}};
            return json_answer(header, http::status::ok, json::serialize(out));
        });
    }

    if (resource == "files") {
        const std::string filename = name;
        if (route.size() == 2 && is_read(method)) {
            auto found = context_.catalog.find_file(filename);
            if (!found) return fail(found.error());
            if (!*found) return fail(no_such_file(filename));
            render::file_detail detail;
            detail.file = std::move(**found);
            auto project = context_.catalog.find_project(detail.file.project);
            if (!project) return fail(project.error());
            if (*project) detail.project = std::move(**project);
            detail.metadata_text = read_metadata(context_.blobs, detail.file.sha256);
            auto read = context_.catalog.read_snapshot([&](sqlite::connection& db) -> result<void> {
                auto downloads = catalog::read_downloads(db, detail.file.id);
                if (!downloads) return downloads.error();
                detail.downloads = std::move(*downloads);
                auto history = catalog::read_audit(db, history_entries, filename);
                if (!history) return history.error();
                detail.history = std::move(*history);
                return {};
            });
            if (!read) return fail(read.error());
            render::link_options links;
            links.files_base = context_.settings.files_base;
            return respond(json_answer(header, http::status::ok, render::file_detail_json(detail, links)));
        }
        const bool deleting = route.size() == 2;
        if (deleting && method != http::verb::delete_) return respond(method_not_allowed(header, "GET, HEAD, DELETE"));
        if (!deleting && method != http::verb::post) return respond(method_not_allowed(header, "POST"));
        const std::string_view what = deleting ? "deletions" : action == "yank" ? "yanks" : "un-yanks";
        auto authorized = authorize(tokens_, header, access_rule{auth::scope::admin, what, how_to_send});
        if (!authorized) return fail(authorized.error());
        auto found = context_.catalog.find_file(filename);
        if (!found) return fail(found.error());
        if (!*found) return fail(no_such_file(filename));
        auto grant = admin_grant(what, (*found)->project);
        if (!grant) return fail(grant.error());
        if (deleting) {
            return submit(grant->name, [this, header, filename, actor = grant->name] {
                auto removed = ingester_.delete_file(filename, actor);
                if (!removed) {
                    if (removed.error().kind == error_kind::not_found) return json_error(header, no_such_file(filename));
                    return json_error(header, removed.error());
                }
                json::object out{{"deleted", removed->filename},
                                 {"project", removed->project},
                                 {"sha256", removed->sha256},
                                 {"blob_removed", !context_.blobs.has_blob(removed->sha256)}};
                return json_answer(header, http::status::ok, json::serialize(out));
            });
        }
        auto body = body_object(request.body, R"({"reason": "broken on sm120"})");
        if (!body) return fail(body.error());
        auto reason = optional_text(*body, "reason", max_reason_length);
        if (!reason) return fail(reason.error());
        const bool yank = action == "yank";
        return submit(grant->name, [this, header, filename, yank, reason = *reason, actor = grant->name] {
            auto changed = yank ? context_.catalog.yank(filename, reason.value_or(""), actor)
                                : context_.catalog.unyank(filename, actor, reason);
            if (!changed) {
                if (changed.error().kind == error_kind::not_found) return json_error(header, no_such_file(filename));
                return json_error(header, changed.error());
            }
            return json_answer(header, http::status::ok, json::serialize(file_state(*changed)));
        });
    }

    if (resource == "tokens") {
        if (route.size() == 1 && !is_read(method) && method != http::verb::post)
            return respond(method_not_allowed(header, "GET, HEAD, POST"));
        if (route.size() == 2 && method != http::verb::delete_) return respond(method_not_allowed(header, "DELETE"));
        auto grant = admin_grant("token lists and changes", "");
        if (!grant) return fail(grant.error());
        if (is_read(method)) {
            auto tokens = tokens_.list();
            if (!tokens) return fail(tokens.error());
            return respond(json_answer(header, http::status::ok, render::token_list_json(*tokens, catalog::now_ms())));
        }
        if (route.size() == 2) {
            return submit(grant->name, [this, header, token_name = name, actor = grant->name] {
                auto revoked = tokens_.revoke(token_name, actor);
                if (!revoked) return json_error(header, revoked.error());
                return json_answer(header, http::status::ok,
                                   json::serialize(render::token_json(*revoked, catalog::now_ms())));
            });
        }
        auto body = body_object(request.body, R"({"name": "ci-flash-attn", "scope": "upload", "projects": ["flash-attn"]})");
        if (!body) return fail(body.error());
        auto token_name = optional_text(*body, "name", 100);
        if (!token_name) return fail(token_name.error());
        if (!*token_name) return fail(invalid("give the token a name: {\"name\": \"ci-flash-attn\", \"scope\": \"upload\"}"));
        auto scope_text = optional_text(*body, "scope", 20);
        if (!scope_text) return fail(scope_text.error());
        auto granted = auth::parse_scope(scope_text->value_or("upload"));
        if (!granted) return fail(granted.error());
        std::vector<std::string> patterns;
        if (const auto* projects = body->if_contains("projects"); projects != nullptr && !projects->is_null()) {
            if (!projects->is_array()) return fail(invalid("'projects' must be a list of project names or globs"));
            for (const auto& item : projects->as_array()) {
                if (!item.is_string()) return fail(invalid("'projects' must be a list of project names or globs"));
                if (item.as_string() != "*") patterns.emplace_back(item.as_string());
            }
        }
        std::optional<std::chrono::seconds> lifetime;
        if (const auto* days = body->if_contains("expires_in_days"); days != nullptr && !days->is_null()) {
            if (!days->is_int64() || days->as_int64() < 1 || days->as_int64() > 3650)
                return fail(invalid("'expires_in_days' must be a whole number from 1 to 3650, or null for no expiry"));
            lifetime = std::chrono::seconds(days->as_int64() * 86'400);
        }
        return submit(grant->name, [this, header, token_name = **token_name, granted = *granted,
                                    patterns = std::move(patterns), lifetime, actor = grant->name] {
            auto created = tokens_.create(token_name, granted, patterns, lifetime, actor);
            if (!created) return json_error(header, created.error());
            json::object out{{"token", render::token_json(created->record, catalog::now_ms())},
                             {"secret", created->secret}};
            return json_answer(header, http::status::created, json::serialize(out));
        });
    }

    // audit
    if (!is_read(method)) return respond(method_not_allowed(header, "GET, HEAD"));
    auto grant = admin_grant("audit log reads", "");
    if (!grant) return fail(grant.error());
    auto limit = query_integer(target, "limit", 100, 1, max_audit_entries);
    if (!limit) return fail(limit.error());
    std::optional<std::string> about;
    if (const auto wanted = target.query_value("target"); wanted && !wanted->empty()) about = std::string(*wanted);
    std::vector<catalog::audit_entry> entries;
    auto read = context_.catalog.read_snapshot([&](sqlite::connection& db) -> result<void> {
        auto found = catalog::read_audit(db, *limit, about);
        if (!found) return found.error();
        entries = std::move(*found);
        return {};
    });
    if (!read) return fail(read.error());
    respond(json_answer(header, http::status::ok, render::audit_json(entries)));
}

}  // namespace wheelhouse::app
