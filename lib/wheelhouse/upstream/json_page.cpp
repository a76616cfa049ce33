// PEP 691's JSON project page, read into project_page (page_builder.hpp). Keys this index does
// not know are skipped, as PEP 691 asks of clients; a known key of the wrong type refuses the page.

#include <boost/json.hpp>

#include "wheelhouse/pep503/name.hpp"
#include "wheelhouse/text/quoted.hpp"
#include "wheelhouse/text/json_object.hpp"
#include "wheelhouse/upstream/page_builder.hpp"

namespace wheelhouse::upstream::detail {
namespace {

namespace json = boost::json;
using text::quoted;

// The page's schema is four levels deep; a little room beyond it for keys this index skips.
constexpr std::size_t max_depth = 8;

std::string_view view(const json::string& text) { return {text.data(), text.size()}; }

// The member `key` of `object` as a string; nullopt when absent, an error when of another type.
result<std::optional<std::string>> optional_string(const json::object& object, std::string_view key,
                                                   std::string_view where) {
    const auto* value = object.if_contains(key);
    if (!value) return std::optional<std::string>();
    if (!value->is_string()) return invalid(std::string(where) + "'s " + std::string(key) + " is not a string");
    return std::optional<std::string>(std::string(view(value->get_string())));
}

result<const json::object*> required_object(const json::object& object, std::string_view key, std::string_view where) {
    const auto* value = object.if_contains(key);
    if (!value || !value->is_object()) return invalid(std::string(where) + " has no object " + std::string(key));
    return &value->get_object();
}

// PEP 691 "hashes", or core-metadata's hashes: the sha256 given, "" for none.
std::string sha256_of(const json::object& hashes) {
    const auto* digest = hashes.if_contains("sha256");
    return digest && digest->is_string() ? sha256_named_in("sha256=" + std::string(view(digest->get_string()))) : "";
}

// PEP 714 "core-metadata", or its PEP 658 name: true, false, or the metadata file's hashes.
result<std::optional<std::string>> metadata_of(const json::object& file) {
    const auto* value = file.if_contains("core-metadata");
    if (!value) value = file.if_contains("dist-info-metadata");
    if (!value || value->is_bool()) return std::optional<std::string>();  // true without a hash cannot be checked
    if (!value->is_object()) return invalid("a file's core-metadata is neither true, false nor hashes");
    const auto digest = sha256_of(value->get_object());
    return digest.empty() ? std::optional<std::string>() : std::optional<std::string>(digest);
}

result<listed_link> read_file(const json::value& value) {
    if (!value.is_object()) return invalid("an entry of files is not an object");
    const auto& file = value.get_object();
    listed_link link;
    const auto* url = file.if_contains("url");
    const auto* filename = file.if_contains("filename");
    if (!url || !url->is_string() || !filename || !filename->is_string())
        return invalid("a file has no string url and filename");
    link.reference = std::string(view(url->get_string()));
    link.link_text = std::string(view(filename->get_string()));
    link.check_text = true;  // pip names the file by its URL: the two must agree
    auto hashes = required_object(file, "hashes", "a file");
    if (!hashes) return hashes.error();
    link.sha256 = sha256_of(**hashes);
    auto& out = link.attributes;
    auto requires_python = optional_string(file, "requires-python", "a file");
    if (!requires_python) return requires_python.error();
    out.requires_python = std::move(*requires_python);
    if (const auto* yanked = file.if_contains("yanked")) {
        if (yanked->is_string()) out.yanked_reason = std::string(view(yanked->get_string()));
        else if (yanked->is_bool() && yanked->get_bool()) out.yanked_reason = std::string();
        else if (!yanked->is_bool()) return invalid("a file's yanked is neither a boolean nor a reason");
    }
    auto metadata = metadata_of(file);
    if (!metadata) return metadata.error();
    out.metadata_sha256 = std::move(*metadata);
    if (const auto* size = file.if_contains("size")) {
        if (size->is_uint64()) out.size = size->get_uint64();
        else if (size->is_int64() && size->get_int64() >= 0) out.size = static_cast<std::uint64_t>(size->get_int64());
        else return invalid("a file's size is not a non-negative integer");
    }
    auto upload_time = optional_string(file, "upload-time", "a file");
    if (!upload_time) return upload_time.error();
    out.upload_time = std::move(*upload_time);
    if (const auto* provenance = file.if_contains("provenance")) {  // PEP 740: a URL or null
        if (provenance->is_string()) link.provenance_reference = std::string(view(provenance->get_string()));
        else if (!provenance->is_null()) return invalid("a file's provenance is neither a URL nor null");
    }
    return link;
}

result<void> read_status(const json::object& page, project_page& out) {
    const auto* value = page.if_contains("project-status");
    if (!value) return {};
    if (!value->is_object()) return invalid("its project-status is not an object");
    auto status = optional_string(value->get_object(), "status", "project-status");
    auto reason = optional_string(value->get_object(), "reason", "project-status");
    if (!status) return status.error();
    if (!reason) return reason.error();
    if (*status) out.status = known_status(**status);
    if (out.status && *reason && (*reason)->size() <= max_text_length) out.status_reason = std::move(*reason);
    return {};
}

result<void> read_versions(const json::object& page, project_page& out) {
    const auto* value = page.if_contains("versions");
    if (!value) return {};
    if (!value->is_array()) return invalid("its versions is not an array");
    out.versions_listed = true;
    for (const auto& version : value->get_array()) {
        if (!version.is_string()) return invalid("an entry of versions is not a string");
        out.versions.emplace_back(view(version.get_string()));
    }
    return {};
}

}  // namespace

result<project_page> parse_json_page(std::string_view body, const page_source& source) {
    auto document = text::parse_json_object(body, {.max_depth = max_depth});
    if (!document) return document.error();
    const auto& page = *document;
    auto meta = required_object(page, "meta", "it");
    if (!meta) return meta.error();
    auto declared = optional_string(**meta, "api-version", "meta");
    if (!declared) return declared.error();
    if (!*declared) return invalid("its meta has no api-version");
    auto version = supported_api_version(**declared);
    if (!version) return version.error();
    auto name = optional_string(page, "name", "it");
    if (!name) return name.error();
    if (!*name || pep503::normalize(**name) != source.project)
        return invalid("it names the project " + quoted(name->value_or("")) + ", not " + source.project);
    const auto* files = page.if_contains("files");
    if (!files || !files->is_array()) return invalid("it has no array files");

    page_builder built(source, body.size());
    auto& out = built.page();
    out.api_version = *version;
    if (auto status = read_status(page, out); !status) return status.error();
    if (auto versions = read_versions(page, out); !versions) return versions.error();
    for (const auto& entry : files->get_array()) {
        auto link = read_file(entry);
        if (!link) return link.error();
        if (auto added = built.add(std::move(*link)); !added) return added.error();
    }
    return std::move(built).finish();
}

}  // namespace wheelhouse::upstream::detail
