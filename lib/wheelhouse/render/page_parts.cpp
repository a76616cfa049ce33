#include "wheelhouse/render/page_parts.hpp"

#include <boost/json.hpp>

#include "wheelhouse/render/html.hpp"

namespace wheelhouse::render {

namespace json = boost::json;

void append_html_page_head(std::string& out, std::string_view api_version, std::string_view project,
                           std::string_view status, const std::optional<std::string>& status_reason) {
    out += "<!DOCTYPE html>\n<html>\n  <head>\n    <meta name=\"pypi:repository-version\" content=\"";
    out += api_version;
    out += "\">\n";
    if (!status.empty() && status != "active") {
        out += "    <meta name=\"pypi:project-status\" content=\"";
        append_html_escaped(out, status);
        out += "\">\n";
        if (status_reason) {
            out += "    <meta name=\"pypi:project-status-reason\" content=\"";
            append_html_escaped(out, *status_reason);
            out += "\">\n";
        }
    }
    out += "    <title>";
    append_html_escaped(out, "Links for " + std::string(project));
    out += "</title>\n  </head>\n  <body>\n    <h1>Links for ";
    append_html_escaped(out, project);
    out += "</h1>\n";
}

void append_html_page_end(std::string& out) { out += "  </body>\n</html>\n"; }

void append_html_link(std::string& out, const file_link& link) {
    out += "    <a href=\"";
    append_html_escaped(out, link.url);
    out += "#sha256=";
    out += link.sha256;
    out.push_back('"');
    if (link.requires_python) {
        out += " data-requires-python=\"";
        append_html_escaped(out, *link.requires_python);
        out.push_back('"');
    }
    if (link.yanked_reason) {
        out += " data-yanked=\"";
        append_html_escaped(out, *link.yanked_reason);
        out.push_back('"');
    }
    if (!link.metadata_sha256.empty()) {
        out += " data-dist-info-metadata=\"sha256=";
        out += link.metadata_sha256;
        out += "\" data-core-metadata=\"sha256=";
        out += link.metadata_sha256;
        out.push_back('"');
    }
    if (!link.provenance.empty()) {
        out += " data-provenance=\"";
        append_html_escaped(out, link.provenance);
        out.push_back('"');
    }
    out += ">";
    append_html_escaped(out, link.filename);
    out += "</a><br>\n";
}

json::object json_file(const file_link& link) {
    json::object item;
    item["filename"] = link.filename;
    item["url"] = link.url;
    item["hashes"] = json::object{{"sha256", link.sha256}};
    if (link.requires_python) item["requires-python"] = *link.requires_python;
    if (link.size) item["size"] = *link.size;
    if (link.upload_time) item["upload-time"] = *link.upload_time;
    if (link.yanked_reason && !link.yanked_reason->empty()) item["yanked"] = *link.yanked_reason;
    else item["yanked"] = link.yanked_reason.has_value();
    if (!link.metadata_sha256.empty()) {
        item["core-metadata"] = json::object{{"sha256", link.metadata_sha256}};
    } else {
        item["core-metadata"] = false;
    }
    if (!link.provenance.empty()) item["provenance"] = link.provenance;
    return item;
}

json::object json_meta(std::string_view api_version) {
    json::object meta;
    meta["api-version"] = api_version;
    return meta;
}

}  // namespace wheelhouse::render
