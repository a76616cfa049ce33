#include "wheelhouse/app/routes/remote_routes.hpp"

#include <boost/json.hpp>
#include <spdlog/spdlog.h>

#include "wheelhouse/app/answers.hpp"
#include "wheelhouse/app/json_body.hpp"
#include "wheelhouse/app/route_access.hpp"
#include "wheelhouse/auth/token_store.hpp"
#include "wheelhouse/error_text.hpp"
#include "wheelhouse/auth/build_labels.hpp"
#include "wheelhouse/remote/github_api.hpp"
#include "wheelhouse/remote/github_release.hpp"
#include "wheelhouse/remote/registrar.hpp"
#include "wheelhouse/remote/release_import.hpp"
#include "wheelhouse/transport/responses.hpp"

namespace wheelhouse::app::registration {
namespace {

namespace json = boost::json;
using transport::outgoing_response;

route_answer answer(const route_request& request, http::status status, const json::object& body) {
    return json_response(request.header(), status, json::serialize(body));
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
                           : std::string(reason_of(*report.failure));
        if (report.failure->kind != error_kind::internal && !detail_of(*report.failure).empty())
            out["detail"] = detail_of(*report.failure);
    }
    return out;
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

// Registration and import run their fetches with these; the settings name the GitHub to ask.
struct registration_tools {
    remote::github_api github;
    remote::registrar registrar;

    explicit registration_tools(route_context& context)
        : github(context.asset_client, github_settings_of(context)),
          registrar(context.asset_client, context.ingester, github, registrar_settings_of(context)) {}

    static remote::github_settings github_settings_of(const route_context& context) {
        remote::github_settings settings;
        settings.api_url = context.settings.github_api_url;
        settings.token = context.settings.github_token;
        return settings;
    }
    static remote::registrar_settings registrar_settings_of(const route_context& context) {
        remote::registrar_settings settings;
        settings.default_mode = context.settings.remote_download_mode;
        settings.max_file_bytes = context.settings.max_upload_bytes;
        return settings;
    }
};

// A registration can take minutes (a whole asset hashed): the token checked at its headers is
// checked again in the commit that lists the file, so a revocation meanwhile lists nothing.
std::function<result<void>(sqlite::connection&)> token_still_good(const auth::token_grant& grant) {
    return [token = grant.name](sqlite::connection& db) { return auth::token_store::confirm_and_mark_used(db, token); };
}

// What both routes read from the body besides their own fields.
struct common_fields {
    json::object body;
    std::optional<catalog::download_mode> mode;
    bool verify = false;
};

result<common_fields> read_common(const route_request& request, std::string_view example) {
    auto body = body_object(request.incoming.body, example);
    if (!body) return body.error();
    auto mode = mode_field(*body);
    if (!mode) return mode.error();
    auto verify = verify_field(*body);
    if (!verify) return verify.error();
    return common_fields{std::move(*body), *mode, *verify};
}

}  // namespace

route_answer register_asset(route_context& context, route_request& request) {
    constexpr std::string_view example = R"({"url": "https://github.com/OWNER/REPO/releases/download/TAG/FILE.whl"})";
    auto fields = read_common(request, example);
    if (!fields) return request.refuse(fields.error());
    auto url = text_field(fields->body, "url");
    if (!url) return request.refuse(url.error());
    if (!*url || (*url)->empty()) return request.refuse(invalid("give the asset's URL: " + std::string(example)));
    auto sha256 = text_field(fields->body, "sha256");
    if (!sha256) return request.refuse(sha256.error());
    remote::registration_request one;
    one.url = std::move(**url);
    one.sha256 = std::move(*sha256);
    one.mode = fields->mode;
    one.verify = fields->verify;
    one.actor = request.grant->name;
    one.in_same_commit = token_still_good(*request.grant);
    // The token's project limits, from the filename, before anything is fetched.
    const auto filename = remote::url_filename(one.url);
    if (auto allowed = may_act_on_file(request, filename ? std::string_view(*filename) : std::string_view());
        !allowed) {
        return request.refuse(allowed.error());
    }
    // And a trusted publisher's label pattern (auth/build_labels.hpp); a URL naming no file fails it.
    if (!request.grant->build_limits.empty()) {
        auto allowed = filename ? auth::permits_file(*request.grant, *filename)
                                : result<void>(make_error(error_kind::forbidden, "a token limited to some builds registers "
                                                                                "only URLs that end in the file's name"));
        if (!allowed) return request.refuse(allowed.error());
    }
    registration_tools tools(context);
    auto report = tools.registrar.register_asset(one);
    if (report.failure && report.failure->kind == error_kind::internal) {
        spdlog::error("registering {}: {}", report.url, describe(*report.failure));
    }
    const auto status = report.outcome == remote::registration_outcome::added     ? http::status::created
                        : report.outcome == remote::registration_outcome::present ? http::status::ok
                                                                                   : transport::status_for(report.failure->kind);
    return answer(request, status, report_json(report));
}

route_answer import_release(route_context& context, route_request& request) {
    constexpr std::string_view example = R"({"repository": "OWNER/REPO", "tag": "v1.0"})";
    auto fields = read_common(request, example);
    if (!fields) return request.refuse(fields.error());
    auto repository = text_field(fields->body, "repository");
    if (!repository) return request.refuse(repository.error());
    auto tag = text_field(fields->body, "tag");
    if (!tag) return request.refuse(tag.error());
    if (!*repository || !*tag || (*tag)->empty()) return request.refuse(invalid("give the release: " + std::string(example)));
    auto parsed = remote::parse_repository(**repository);
    if (!parsed) return request.refuse(parsed.error());
    remote::import_request release;
    release.repository = std::move(parsed).value();
    release.tag = std::move(**tag);
    release.mode = fields->mode;
    release.verify = fields->verify;
    release.actor = request.grant->name;
    release.in_same_commit = token_still_good(*request.grant);
    release.may_register = [&request](std::string_view filename) -> result<void> {
        if (auto allowed = may_act_on_file(request, filename); !allowed) return allowed.error();
        return {};
    };
    // A release holds builds of every label; a token limited to some registers them one by one.
    if (!request.grant->build_limits.empty()) {
        return request.refuse(make_error(error_kind::forbidden, "token '" + request.grant->name +
                                                                   "' may publish only some builds; register them one "
                                                                   "at a time with POST /api/v1/remote"));
    }

    registration_tools tools(context);
    auto imported = remote::import_release(tools.github, tools.registrar, release);
    if (!imported) return request.refuse(imported.error());
    json::array files;
    for (const auto& report : imported->files) files.push_back(report_json(report));
    json::array skipped;
    for (const auto& name : imported->skipped) skipped.push_back(json::string(name));
    return answer(request, http::status::ok,
                  json::object{{"repository", release.repository.owner + "/" + release.repository.name},
                               {"tag", release.tag},
                               {"release_id", imported->release_id},
                               {"added", imported->count(remote::registration_outcome::added)},
                               {"present", imported->count(remote::registration_outcome::present)},
                               {"rejected", imported->count(remote::registration_outcome::rejected)},
                               {"files", std::move(files)},
                               {"skipped", std::move(skipped)}});
}

}  // namespace wheelhouse::app::registration
