#include "wheelhouse/app/remote_routes.hpp"

#include <boost/json.hpp>
#include <spdlog/spdlog.h>

#include "wheelhouse/app/authorization.hpp"
#include "wheelhouse/pep427/wheel_filename.hpp"
#include "wheelhouse/remote/github_api.hpp"
#include "wheelhouse/remote/github_release.hpp"
#include "wheelhouse/remote/registrar.hpp"
#include "wheelhouse/remote/release_import.hpp"
#include "wheelhouse/transport/responses.hpp"

namespace wheelhouse::app {
namespace {

namespace json = boost::json;
using transport::outgoing_response;

constexpr std::uint64_t max_body_bytes = 64 * 1024;
constexpr std::chrono::seconds retry_after{2};
constexpr access_rule register_rule{auth::scope::upload, "registrations of remote files",
                                    "send 'Authorization: Bearer <token>' with a token of scope upload or admin"};

outgoing_response json_answer(const http::request_header<>& request, http::status status, json::object body,
                              http::fields extra = {}) {
    extra.set(http::field::cache_control, "no-store");
    extra.set("X-Content-Type-Options", "nosniff");
    auto text = json::serialize(body);
    text.push_back('\n');
    return transport::make_shared_response(request, status, "application/json",
                                           std::make_shared<const std::string>(std::move(text)), std::move(extra));
}

json::object error_body(const http::request_header<>& request, const error& failure) {
    std::string message = failure.message;
    if (failure.kind == error_kind::internal) {
        spdlog::error("{} {}: {}", request.method_string(), request.target(), failure.message);
        message = "the index failed to answer this request; the administrator has the details in the log";
    }
    return json::object{{"error", message}};
}

outgoing_response json_error(const http::request_header<>& request, const error& failure, http::fields extra = {}) {
    if (failure.kind == error_kind::unauthorized) extra.set(http::field::www_authenticate, "Bearer realm=\"wheelhouse\"");
    return json_answer(request, transport::status_for(failure.kind), error_body(request, failure), std::move(extra));
}

json::object report_json(const remote::registration_report& report) {
    json::object out{{"filename", report.filename},
                     {"url", report.url},
                     {"outcome", remote::to_string(report.outcome)},
                     {"mode", catalog::to_string(report.mode)},
                     {"size", report.size},
                     {"bytes_transferred", report.bytes_transferred},
                     {"requests", report.requests}};
    if (!report.sha256.empty()) {
        out["sha256"] = report.sha256;
        out["sha256_source"] = remote::to_string(report.sha256_source);
    }
    if (report.file) out["project"] = report.file->project;
    if (report.failure) {
        out["error"] = report.failure->kind == error_kind::internal
                           ? std::string("the index failed to register this file; the administrator has the details in the log")
                           : report.failure->message;
    }
    return out;
}

result<json::object> body_object(const std::string& body, std::string_view example) {
    boost::system::error_code ec;
    auto parsed = json::parse(body, ec);
    if (ec) return invalid("the body is not JSON (" + ec.message() + "); send an object such as " + std::string(example));
    if (!parsed.is_object()) return invalid("the body must be a JSON object such as " + std::string(example));
    return std::move(parsed.as_object());
}

result<std::optional<std::string>> text_field(const json::object& body, std::string_view key) {
    const auto* value = body.if_contains(key);
    if (value == nullptr || value->is_null()) return std::optional<std::string>();
    if (!value->is_string()) return invalid("'" + std::string(key) + "' must be a string");
    return std::optional<std::string>(std::string(value->as_string()));
}

result<std::optional<catalog::download_mode>> mode_field(const json::object& body) {
    auto text = text_field(body, "mode");
    if (!text) return text.error();
    if (!*text) return std::optional<catalog::download_mode>();
    auto mode = catalog::parse_download_mode(**text);
    if (!mode || *mode == catalog::download_mode::local) {
        return invalid("'mode' is '" + **text + "'; give redirect, proxy or cache");
    }
    return std::optional<catalog::download_mode>(*mode);
}

result<bool> verify_field(const json::object& body) {
    const auto* value = body.if_contains("verify");
    if (value == nullptr || value->is_null()) return false;
    if (!value->is_bool()) return invalid("'verify' must be true or false");
    return value->as_bool();
}

}  // namespace

remote_routes::remote_routes(route_context& context, auth::token_store& tokens, concurrency::worker_pool& workers)
    : context_(context), tokens_(tokens), workers_(workers), ingester_(context.catalog, context.blobs) {}

bool remote_routes::claims(const http_target::request_target& target) {
    const auto& segments = target.segments;
    if (segments.size() < 3 || segments[0] != "api" || segments[1] != "v1") return false;
    if (segments.size() == 3) return segments[2] == "remote";
    return segments.size() == 4 && segments[2] == "import" && segments[3] == "github";
}

transport::body_plan remote_routes::plan(const http::request_header<>& request) const {
    transport::body_plan plan;
    if (request.method() != http::verb::post) return plan;
    plan.how = transport::body_plan::kind::in_memory;
    plan.limit = max_body_bytes;
    return plan;
}

void remote_routes::handle(transport::incoming_request request, const http_target::request_target& target,
                           const transport::responder& respond) {
    const auto& header = request.header;
    const bool importing = target.segments.size() == 4;
    if (header.method() != http::verb::post) {
        http::fields allow;
        allow.set(http::field::allow, "POST");
        return respond(json_answer(header, http::status::method_not_allowed,
                                   json::object{{"error", std::string(header.method_string()) +
                                                              " is not allowed here; use POST"}},
                                   std::move(allow)));
    }
    auto fail = [&](const error& failure) { respond(json_error(header, failure)); };
    auto grant = authorize(tokens_, header, register_rule);
    if (!grant) return fail(grant.error());
    if (context_.remote == nullptr) {
        return fail(make_error(error_kind::unavailable,
                               "this server has no HTTP client for remote files configured; its administrator can "
                               "enable one (see wheelhouse serve --help, the remote options)"));
    }
    const std::string_view example = importing ? R"({"repository": "OWNER/REPO", "tag": "v1.0"})"
                                               : R"({"url": "https://github.com/OWNER/REPO/releases/download/TAG/FILE.whl"})";
    auto body = body_object(request.body, example);
    if (!body) return fail(body.error());
    auto mode = mode_field(*body);
    if (!mode) return fail(mode.error());
    auto verify = verify_field(*body);
    if (!verify) return fail(verify.error());

    remote::registration_request one;
    remote::import_request release;
    if (importing) {
        auto repository = text_field(*body, "repository");
        if (!repository) return fail(repository.error());
        auto tag = text_field(*body, "tag");
        if (!tag) return fail(tag.error());
        if (!*repository || !*tag || (*tag)->empty()) {
            return fail(invalid("give the release: {\"repository\": \"OWNER/REPO\", \"tag\": \"v1.0\"}"));
        }
        auto parsed = remote::parse_repository(**repository);
        if (!parsed) return fail(parsed.error());
        release.repository = std::move(parsed).value();
        release.tag = std::move(**tag);
        release.mode = *mode;
        release.verify = *verify;
        release.actor = grant->name;
        release.may_register = [grant = *grant](std::string_view project) -> result<void> {
            if (auth::permits(grant, auth::scope::upload, project)) return {};
            return make_error(error_kind::forbidden,
                              "token '" + grant.name + "' may not upload to project '" + std::string(project) + "'");
        };
    } else {
        auto url = text_field(*body, "url");
        if (!url) return fail(url.error());
        if (!*url || (*url)->empty()) return fail(invalid("give the asset's URL: " + std::string(example)));
        auto sha256 = text_field(*body, "sha256");
        if (!sha256) return fail(sha256.error());
        one.url = std::move(**url);
        one.sha256 = std::move(*sha256);
        one.mode = *mode;
        one.verify = *verify;
        one.actor = grant->name;
        // The token's project limits, from the filename, before anything is fetched.
        if (auto filename = remote::url_filename(one.url)) {
            if (auto wheel = pep427::parse_wheel_filename(*filename);
                wheel && !auth::permits(*grant, auth::scope::upload, wheel->normalized_name)) {
                return fail(make_error(error_kind::forbidden, "token '" + grant->name + "' may not upload to project '" +
                                                                  wheel->normalized_name + "'"));
            }
        }
    }

    auto job = [this, respond, header, importing, one = std::move(one), release = std::move(release),
                token = grant->name]() {
        remote::github_settings github_settings;
        github_settings.api_url = context_.settings.github_api_url;
        github_settings.token = context_.settings.github_token;
        remote::github_api github(*context_.remote, github_settings);
        remote::registrar_settings settings;
        settings.default_mode = context_.settings.remote_download_mode;
        settings.max_file_bytes = context_.settings.max_upload_bytes;
        remote::registrar registrar(*context_.remote, ingester_, github, settings);

        auto response = [&]() -> outgoing_response {
            if (importing) {
                auto imported = remote::import_release(github, registrar, release);
                if (!imported) {
                    return json_error(header, imported.error());
                } else {
                    json::array files;
                    for (const auto& report : imported->wheels) files.push_back(report_json(report));
                    json::array skipped;
                    for (const auto& name : imported->skipped) skipped.push_back(json::string(name));
                    return json_answer(
                        header, http::status::ok,
                        json::object{{"repository", release.repository.owner + "/" + release.repository.name},
                                     {"tag", release.tag},
                                     {"release_id", imported->release_id},
                                     {"added", imported->count(remote::registration_outcome::added)},
                                     {"present", imported->count(remote::registration_outcome::present)},
                                     {"rejected", imported->count(remote::registration_outcome::rejected)},
                                     {"files", std::move(files)},
                                     {"skipped", std::move(skipped)}});
                }
            } else {
                auto report = registrar.register_asset(one);
                if (report.failure && report.failure->kind == error_kind::internal) {
                    spdlog::error("registering {}: {}", report.url, report.failure->message);
                }
                const auto status = report.outcome == remote::registration_outcome::added     ? http::status::created
                                    : report.outcome == remote::registration_outcome::present ? http::status::ok
                                                                                               : transport::status_for(report.failure->kind);
                return json_answer(header, status, report_json(report));
            }
        }();
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
}

}  // namespace wheelhouse::app
