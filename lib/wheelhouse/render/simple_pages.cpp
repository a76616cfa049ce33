#include "wheelhouse/render/simple_pages.hpp"

#include <algorithm>
#include <ctime>
#include <optional>
#include <vector>

#include <boost/json.hpp>

#include "wheelhouse/pep440/version.hpp"
#include "wheelhouse/render/html.hpp"
#include "wheelhouse/render/page_parts.hpp"

namespace wheelhouse::render {
namespace {

namespace json = boost::json;

// Files in the order a person reads them: by version, then filename. Versions that fail to
// parse (none should: ingest refuses them) sort first, by text.
struct ordered_file {
    const catalog::file_record* file;
    std::optional<pep440::version> version;
};

std::vector<ordered_file> order_files(const catalog::project_record& project,
                                      std::span<const catalog::file_record> files) {
    std::vector<ordered_file> ordered;
    if (project.status == catalog::project_status::quarantined) return ordered;
    ordered.reserve(files.size());
    for (const auto& file : files) {
        auto parsed = pep440::parse(file.normalized_version);
        ordered.push_back({&file, parsed ? std::optional(std::move(*parsed)) : std::nullopt});
    }
    std::sort(ordered.begin(), ordered.end(), [](const ordered_file& a, const ordered_file& b) {
        if (a.version && b.version) {
            const auto order = pep440::compare(*a.version, *b.version);
            if (order != 0) return order < 0;
        } else if (a.version.has_value() != b.version.has_value()) {
            return !a.version.has_value();
        }
        return a.file->filename < b.file->filename;
    });
    return ordered;
}

// PEP 700 "versions": every version with a file, normalised, once each, in PEP 440 order.
std::vector<std::string> distinct_versions(const std::vector<ordered_file>& ordered) {
    std::vector<std::string> versions;
    for (const auto& entry : ordered) {
        const auto& text = entry.file->normalized_version;
        if (std::find(versions.begin(), versions.end(), text) == versions.end()) versions.push_back(text);
    }
    return versions;
}

// The variants.json of each release of which `ordered` holds a variant wheel.
std::vector<const catalog::release_variants_file*> linked_release_files(
    const std::vector<ordered_file>& ordered, std::span<const catalog::release_variants_file> release_files) {
    std::vector<const catalog::release_variants_file*> linked;
    for (const auto& release : release_files) {
        const bool shown = std::any_of(ordered.begin(), ordered.end(), [&](const ordered_file& entry) {
            return entry.file->variant_label && entry.file->normalized_version == release.normalized_version;
        });
        if (shown) linked.push_back(&release);
    }
    return linked;
}

// How `file` is linked, from its row.
file_link link_of(const catalog::file_record& file, const link_options& links) {
    file_link link;
    link.filename = file.filename;
    link.url = file_url(file, links);
    link.sha256 = file.sha256;
    if (file.requires_python) link.requires_python = *file.requires_python;
    if (file.yanked()) link.yanked_reason = *file.yanked_reason;
    link.metadata_sha256 = file.metadata_sha256;
    link.size = file.size;
    link.upload_time = iso8601_utc(file.upload_time_ms);
    if (file.attested && !links.integrity_base.empty()) link.provenance = provenance_url(file, links);
    return link;
}

}  // namespace

std::string file_url(const catalog::file_record& file, const link_options& links) {
    if (links.remote_files_direct && file.mode != catalog::download_mode::local && file.remote_url)
        return *file.remote_url;
    std::string url = links.files_base;
    url += file.sha256;
    url.push_back('/');
    append_percent_encoded_segment(url, file.filename);
    return url;
}

std::string provenance_url(const catalog::file_record& file, const link_options& links) {
    std::string url = links.integrity_base;
    for (const std::string_view segment : {std::string_view(file.project), std::string_view(file.normalized_version),
                                           std::string_view(file.filename)}) {
        append_percent_encoded_segment(url, segment);
        url.push_back('/');
    }
    return url + "provenance";
}

std::string release_variants_url(const catalog::release_variants_file& release, const link_options& links) {
    std::string url = links.files_base;
    url += release.sha256;
    url.push_back('/');
    append_percent_encoded_segment(url, release.filename);
    return url;
}

std::string iso8601_utc(std::int64_t unix_milliseconds) {
    const std::time_t seconds = static_cast<std::time_t>(unix_milliseconds / 1000);
    const auto micros = static_cast<long>((unix_milliseconds % 1000) * 1000);
    std::tm utc{};
    gmtime_r(&seconds, &utc);
    char text[40];
    const auto length = std::snprintf(text, sizeof text, "%04d-%02d-%02dT%02d:%02d:%02d.%06ldZ", utc.tm_year + 1900,
                                      utc.tm_mon + 1, utc.tm_mday, utc.tm_hour, utc.tm_min, utc.tm_sec, micros);
    return std::string(text, static_cast<std::size_t>(length));
}

std::string project_list_html(std::span<const project_listing> projects) {
    std::string out;
    out.reserve(256 + projects.size() * 64);
    out += "<!DOCTYPE html>\n<html>\n  <head>\n    <meta name=\"pypi:repository-version\" content=\"";
    out += repository_version;
    out += "\">\n    <title>Simple index</title>\n  </head>\n  <body>\n";
    for (const auto& project : projects) {
        out += "    <a href=\"";
        append_html_escaped(out, project.name);
        out += "/\">";
        append_html_escaped(out, project.display_name);
        out += "</a><br>\n";
    }
    out += "  </body>\n</html>\n";
    return out;
}

std::string project_list_json(std::span<const project_listing> projects) {
    json::array list;
    list.reserve(projects.size());
    for (const auto& project : projects) list.push_back(json::object{{"name", project.display_name}});
    json::object page;
    page["meta"] = json_meta(repository_version);
    page["projects"] = std::move(list);
    return json::serialize(page);
}

std::string project_page_html(const catalog::project_record& project, std::span<const catalog::file_record> files,
                              const link_options& links,
                              std::span<const catalog::release_variants_file> release_files, std::string_view note) {
    const auto ordered = order_files(project, files);
    std::string out;
    out.reserve(512 + ordered.size() * 400);
    append_html_page_head(out, repository_version, project.name, catalog::to_string(project.status),
                          project.status_reason);
    if (!note.empty()) {
        out += "    <p>";
        append_html_escaped(out, note);
        out += "</p>\n";
    }
    for (const auto& entry : ordered) append_html_link(out, link_of(*entry.file, links));
    for (const auto* release : linked_release_files(ordered, release_files)) {
        file_link link;
        link.filename = release->filename;
        link.url = release_variants_url(*release, links);
        link.sha256 = release->sha256;
        append_html_link(out, link);
    }
    append_html_page_end(out);
    return out;
}

std::string project_page_json(const catalog::project_record& project, std::span<const catalog::file_record> files,
                              const link_options& links,
                              std::span<const catalog::release_variants_file> release_files, std::string_view note) {
    const auto ordered = order_files(project, files);
    json::array file_list;
    file_list.reserve(ordered.size());
    for (const auto& entry : ordered) {
        const auto& file = *entry.file;
        auto item = json_file(link_of(file, links));
        // Keys with a leading underscore are the index's own (PEP 691).
        if (!file.variant.empty()) item["_variant"] = variants::to_json(file.variant);
        file_list.push_back(std::move(item));
    }
    // PEP 825: requires-python, yanked and core-metadata mean nothing for this file; left out.
    for (const auto* release : linked_release_files(ordered, release_files)) {
        json::object item;
        item["filename"] = release->filename;
        item["url"] = release_variants_url(*release, links);
        item["hashes"] = json::object{{"sha256", release->sha256}};
        item["size"] = release->content.size();
        item["upload-time"] = iso8601_utc(release->updated_ms);
        file_list.push_back(std::move(item));
    }
    json::array versions;
    for (auto& version : distinct_versions(ordered)) versions.push_back(json::string(version));

    json::object status{{"status", catalog::to_string(project.status)}};
    if (project.status_reason) status["reason"] = *project.status_reason;

    json::object page;
    page["meta"] = json_meta(repository_version);
    page["name"] = project.name;
    page["project-status"] = std::move(status);
    page["versions"] = std::move(versions);
    page["files"] = std::move(file_list);
    if (!note.empty()) page["_note"] = note;
    return json::serialize(page);
}

}  // namespace wheelhouse::render
