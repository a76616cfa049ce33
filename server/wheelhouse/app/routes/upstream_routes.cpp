#include "wheelhouse/app/routes/upstream_routes.hpp"

#include <boost/json.hpp>

#include "wheelhouse/app/answers.hpp"
#include "wheelhouse/catalog/upstream_rows.hpp"
#include "wheelhouse/upstream/page_store.hpp"

namespace wheelhouse::app {
namespace {

namespace json = boost::json;

json::object totals_json(const catalog::kept_totals& kept) {
    return {{"files", kept.files}, {"bytes", kept.bytes}, {"metadata_files", kept.metadata_files}};
}

// Each upstream with its page counters (zero when no store runs: no upstream configured).
json::array upstreams_json(const route_context& context) {
    std::optional<upstream::page_store::statistics> counted;
    if (context.upstream_pages != nullptr) counted = context.upstream_pages->stats();
    json::array out;
    for (const auto& each : context.settings.upstreams.upstreams()) {
        json::object entry{{"name", each.name}, {"url", each.url}};
        if (counted) {
            for (const auto& stats : counted->upstreams) {
                if (stats.upstream != each.name) continue;
                entry["pages"] = json::object{{"from_memory", stats.hits},      {"from_network", stats.misses},
                                              {"joined", stats.joined},         {"fetched", stats.fetched},
                                              {"not_modified", stats.not_modified}, {"not_found", stats.not_found},
                                              {"refused", stats.refused},       {"failed", stats.failed},
                                              {"stale", stats.stale}};
            }
        }
        out.push_back(std::move(entry));
    }
    return out;
}

}  // namespace

route_answer upstream_overview(route_context& context, route_request& request) {
    const auto reserved = catalog::list_reservations(context.catalog);
    if (!reserved) return request.refuse(reserved.error());
    const auto projects = catalog::list_kept_projects(context.catalog);
    if (!projects) return request.refuse(projects.error());
    const auto& settings = context.settings;

    json::array routes;
    for (const auto& each : settings.upstreams.routes()) routes.emplace_back(each.text);
    json::array reservations;
    for (const auto& each : *reserved) {
        json::object entry{{"pattern", each.pattern}, {"created_ms", each.created_ms}, {"created_by", each.created_by}};
        entry["reason"] = each.reason ? json::value(*each.reason) : json::value(nullptr);
        reservations.push_back(std::move(entry));
    }
    json::array kept_projects;
    catalog::kept_totals all;
    for (const auto& each : *projects) {
        auto entry = totals_json(each.kept);
        entry["project"] = each.project;
        entry["upstream"] = each.upstream;
        kept_projects.push_back(std::move(entry));
        all.files += each.kept.files;
        all.bytes += each.kept.bytes;
        all.metadata_files += each.kept.metadata_files;
    }
    json::object out{
        {"upstreams", upstreams_json(context)},
        {"routes", std::move(routes)},
        {"files", settings.upstream_link_files ? "link" : "cache"},
        {"offline", settings.upstream_pages.offline},
        {"max_age_seconds", settings.upstream_pages.max_age.count()},
        {"reserved", std::move(reservations)},
        {"kept", totals_json(all)},
        {"kept_projects", std::move(kept_projects)},
    };
    if (context.upstream_pages != nullptr) {
        const auto stats = context.upstream_pages->stats();
        out["pages_in_memory"] = json::object{{"pages", stats.pages}, {"bytes", stats.bytes}};
    }
    return json_response(request.header(), http::status::ok, json::serialize(out));
}

}  // namespace wheelhouse::app
