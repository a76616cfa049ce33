#include "wheelhouse/render/admin_json.hpp"

#include <algorithm>

#include <boost/json.hpp>

#include "wheelhouse/catalog/project_search.hpp"
#include "wheelhouse/render/json_fields.hpp"
#include "wheelhouse/render/variant_matrix.hpp"
#include "wheelhouse/text/utf8.hpp"
#include "wheelhouse/variants/build_variant.hpp"

namespace wheelhouse::render {
namespace {

namespace json = boost::json;

// Each filter axis as its canonical word, null when not given.
json::object filters_json(const catalog::build_filter& builds) {
    const auto& wanted = builds.wanted.constraints;
    auto word = [](auto field, const auto& value) -> json::value {
        if (!value) return nullptr;
        variants::selector one;
        one.constraints.*field = value;
        return json::value(one.canonical());
    };
    using variants::build_variant;
    return json::object{{"cuda", word(&build_variant::cuda, wanted.cuda)},
                        {"torch", word(&build_variant::torch, wanted.torch)},
                        {"sm", word(&build_variant::sm, wanted.sm)},
                        {"rocm", word(&build_variant::rocm, wanted.rocm)},
                        {"python", builds.python ? json::value(*builds.python) : json::value(nullptr)},
                        {"kind", builds.kind ? json::value(builds.kind == catalog::package_type::sdist ? "sdist" : "wheel")
                                             : json::value(nullptr)},
                        {"lacks", builds.lacks}};
}

}  // namespace

std::string project_list_json(const catalog::project_page& page, const catalog::project_query& query) {
    json::array projects;
    projects.reserve(page.projects.size());
    for (const auto& summary : page.projects) {
        projects.push_back(json::object{{"name", summary.project.name},
                                        {"display_name", summary.project.display_name},
                                        {"status", catalog::to_string(summary.project.status)},
                                        {"latest_version", summary.latest_version},
                                        {"file_count", summary.file_count},
                                        {"total_size", summary.total_size},
                                        {"last_upload", time_or_null(summary.last_upload_ms)}});
    }
    const auto pages = (page.total + query.per_page - 1) / query.per_page;
    json::object out{{"query", catalog::normalize_search(query.search)},
                     {"sort", catalog::to_string(query.sort)},
                     {"page", query.page},
                     {"per_page", query.per_page},
                     {"total", page.total},
                     {"pages", pages},
                     {"filters", filters_json(query.builds)},
                     {"projects", std::move(projects)}};
    return json::serialize(out);
}

std::string build_words_json(const catalog::build_words& words) {
    auto sorted = [](const std::set<std::string>& values) {
        std::vector<std::string> ordered(values.begin(), values.end());
        std::sort(ordered.begin(), ordered.end(), natural_less);
        json::array out;
        for (auto& value : ordered) out.emplace_back(std::move(value));
        return out;
    };
    json::object out{{"cuda", sorted(words.cuda)},
                     {"torch", sorted(words.torch)},
                     {"sm", sorted(words.sm)},
                     {"rocm", sorted(words.rocm)},
                     {"python", sorted(words.python)},
                     {"kind", sorted(words.kind)}};
    return json::serialize(out);
}

std::string project_detail_json(const catalog::project_record& project, std::span<const catalog::file_record> files,
                                const link_options& links) {
    // The matrix is one shape shared with /api/v1/projects/<p>/variants; this page adds to it.
    auto page = json::parse(variant_matrix_json(project, files, links)).as_object();

    std::uint64_t total_size = 0;
    std::int64_t last_upload = 0;
    std::vector<catalog::version_seen> seen;
    for (const auto& file : files) {
        total_size += file.size;
        last_upload = std::max(last_upload, file.upload_time_ms);
        seen.push_back({file.normalized_version, file.yanked()});
    }
    const auto latest = catalog::latest_release(seen);
    // The summary and requires-python of the newest release, from a file of it that is not
    // yanked where there is one: the METADATA pip would read.
    const catalog::file_record* newest = nullptr;
    for (const auto& file : files) {
        if (file.normalized_version.substr(0, file.normalized_version.find('+')) != latest) continue;
        if (newest == nullptr || (newest->yanked() && !file.yanked()) ||
            (newest->yanked() == file.yanked() && file.upload_time_ms > newest->upload_time_ms)) {
            newest = &file;
        }
    }
    page["status_reason"] = text_or_null(project.status_reason);
    page["summary"] = newest ? text_or_null(newest->summary) : json::value(nullptr);
    page["requires_python"] = newest ? text_or_null(newest->requires_python) : json::value(nullptr);
    page["latest_version"] = latest;
    page["file_count"] = files.size();
    page["total_size"] = total_size;
    page["last_upload"] = time_or_null(last_upload);
    return json::serialize(page);
}

std::string file_detail_json(const file_detail& detail, const link_options& links) {
    const auto& file = detail.file;
    json::object out = file_json(file);
    out["project"] = file.project;
    out["display_name"] = detail.project.display_name;
    out["project_status"] = catalog::to_string(detail.project.status);
    out["version"] = file.version;
    out["normalized_version"] = file.normalized_version;
    out["uploaded_by"] = text_or_null(file.uploaded_by);
    out["summary"] = text_or_null(file.summary);
    out["location"] = json::object{{"mode", catalog::to_string(file.mode)},
                                   {"url", file_url(file, links)},
                                   {"remote_url", text_or_null(file.remote_url)},
                                   {"fetch_url", text_or_null(file.fetch_url)}};
    out["metadata"] = json::object{{"sha256", file.metadata_sha256},
                                   {"size", file.metadata_size},
                                   {"text", text_or_null(detail.metadata_text)}};
    std::int64_t total = 0;
    json::array days;
    for (const auto& day : detail.downloads) {
        total += day.count;
        days.push_back(json::object{{"day", day.day}, {"count", day.count}});
    }
    out["downloads"] = json::object{{"total", total}, {"days", std::move(days)}};
    json::array history;
    for (const auto& entry : detail.history) history.push_back(audit_entry_json(entry));
    out["history"] = std::move(history);
    return json::serialize(out);
}

namespace {

// A token's build limits: [{"project", "labels"}], or null for any build.
json::value builds_json(const std::vector<auth::build_limit>& limits) {
    if (limits.empty()) return nullptr;
    json::array list;
    for (const auto& limit : limits) list.push_back(json::object{{"project", limit.project}, {"labels", limit.label_pattern}});
    return list;
}

}  // namespace

json::object token_json(const auth::token_record& token, std::int64_t now_ms) {
    json::array projects;
    if (token.grant.project_patterns.empty()) projects.emplace_back("*");
    for (const auto& pattern : token.grant.project_patterns) projects.emplace_back(pattern);
    return json::object{{"name", token.grant.name},
                        {"scope", auth::to_string(token.grant.granted)},
                        {"projects", std::move(projects)},
                        {"created", time_or_null(token.created_ms)},
                        {"expires", time_or_null(token.expires_ms)},
                        {"revoked", time_or_null(token.revoked_ms)},
                        {"last_used", time_or_null(token.last_used_ms)},
                        {"usable", token.usable_at(now_ms)},
                        {"builds", builds_json(token.grant.build_limits)},
                        {"publisher", token.grant.publisher_id ? json::value(*token.grant.publisher_id) : json::value(nullptr)}};
}

json::object publisher_json(const oidc::publisher& who) {
    return json::object{{"id", who.id},
                        {"project", who.project},
                        {"kind", oidc::to_string(who.kind)},
                        {"issuer", who.issuer},
                        {"repository", who.repository},
                        {"owner_id", who.owner_id},
                        {"workflow", who.workflow},
                        {"environment", who.environment},
                        {"label_pattern", who.label_pattern},
                        {"created", time_or_null(who.created_ms)},
                        {"created_by", text::replace_invalid_utf8(who.created_by)},
                        {"summary", oidc::describe(who)}};
}

std::string publisher_list_json(std::string_view project, std::string_view audience, std::chrono::seconds token_lifetime,
                                std::span<const oidc::publisher> publishers) {
    json::array list;
    for (const auto& who : publishers) list.push_back(publisher_json(who));
    return json::serialize(json::object{{"project", project},
                                        {"audience", audience},
                                        {"token_lifetime", token_lifetime.count()},
                                        {"publishers", std::move(list)}});
}

std::string token_list_json(std::span<const auth::token_record> tokens, std::int64_t now_ms) {
    json::array list;
    for (const auto& token : tokens) list.push_back(token_json(token, now_ms));
    return json::serialize(json::object{{"tokens", std::move(list)}});
}

json::object audit_entry_json(const catalog::audit_entry& entry) {
    return json::object{{"id", entry.id},
                        {"time", time_or_null(entry.time_ms)},
                        {"actor", text::replace_invalid_utf8(entry.actor)},
                        {"action", entry.action},
                        {"target", text::replace_invalid_utf8(entry.target)},
                        {"detail", text_or_null(entry.detail)}};
}

std::string audit_json(const catalog::audit_page& page, const catalog::audit_query& query) {
    json::array list;
    for (const auto& entry : page.entries) list.push_back(audit_entry_json(entry));
    json::array actions;
    for (const auto& action : page.actions) actions.emplace_back(action);
    return json::serialize(json::object{{"page", query.page},
                                        {"per_page", query.per_page},
                                        {"total", page.total},
                                        {"pages", (page.total + query.per_page - 1) / query.per_page},
                                        {"actions", std::move(actions)},
                                        {"entries", std::move(list)}});
}

}  // namespace wheelhouse::render
