#include "wheelhouse/render/upstream_pages.hpp"

#include <algorithm>

#include <boost/json.hpp>

#include "wheelhouse/render/html.hpp"
#include "wheelhouse/render/page_parts.hpp"

namespace wheelhouse::render {
namespace {

namespace json = boost::json;

bool quarantined(const upstream::project_page& page) { return page.status && *page.status == "quarantined"; }

file_link link_of(const upstream::upstream_file& file, const upstream_links& links) {
    file_link link;
    link.filename = file.filename;
    link.url = upstream_file_url(file, links);
    link.sha256 = file.sha256;
    if (file.requires_python) link.requires_python = *file.requires_python;
    if (file.yanked_reason) link.yanked_reason = *file.yanked_reason;
    if (file.metadata_sha256) link.metadata_sha256 = *file.metadata_sha256;
    link.size = file.size;
    link.upload_time = file.upload_time;
    link.provenance = file.provenance.value_or("");
    return link;
}

}  // namespace

std::string upstream_file_url(const upstream::upstream_file& file, const upstream_links& links) {
    if (links.link_upstream) return file.url;
    std::string url = links.files_base;
    url += file.sha256;
    url.push_back('/');
    append_percent_encoded_segment(url, file.filename);
    return url;
}

std::string_view json_api_version(const upstream::project_page& page) noexcept {
    if (page.api_version == "1.0") return page.api_version;
    const bool sized = std::all_of(page.files.begin(), page.files.end(), [](const auto& file) { return file.size; });
    return page.versions_listed && sized ? std::string_view(page.api_version) : std::string_view("1.0");
}

std::string upstream_page_html(const upstream::project_page& page, const upstream_links& links) {
    std::string out;
    out.reserve(512 + page.files.size() * 400);
    append_html_page_head(out, page.api_version, page.project, page.status.value_or("active"), page.status_reason);
    if (!quarantined(page)) {
        for (const auto& file : page.files) append_html_link(out, link_of(file, links));
    }
    append_html_page_end(out);
    return out;
}

std::string upstream_page_json(const upstream::project_page& page, const upstream_links& links) {
    const auto version = json_api_version(page);
    json::array files;
    if (!quarantined(page)) {
        files.reserve(page.files.size());
        for (const auto& file : page.files) files.push_back(json_file(link_of(file, links)));
    }
    json::object out;
    out["meta"] = json_meta(version);
    out["name"] = page.project;
    if (page.status) {
        json::object status{{"status", *page.status}};
        if (page.status_reason) status["reason"] = *page.status_reason;
        out["project-status"] = std::move(status);
    }
    if (version != "1.0") {
        json::array versions;
        for (const auto& each : page.versions) versions.push_back(json::string(each));
        out["versions"] = std::move(versions);
    }
    out["files"] = std::move(files);
    return json::serialize(out);
}

}  // namespace wheelhouse::render
