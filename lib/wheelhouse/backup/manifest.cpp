#include "wheelhouse/backup/manifest.hpp"

#include <boost/json.hpp>

#include "wheelhouse/crypto/hasher.hpp"
#include "wheelhouse/storage/blob_path.hpp"

namespace wheelhouse::backup {
namespace {

namespace json = boost::json;


json::object entry_json(const manifest_entry& entry) {
    return json::object{{"path", entry.path}, {"sha256", entry.sha256}, {"size", entry.size}};
}

error bad(std::string_view what) { return invalid("manifest.json: " + std::string(what)); }

result<manifest_entry> parse_entry(const json::value& value, std::string_view where) {
    const auto* object = value.if_object();
    if (object == nullptr) return bad(std::string(where) + " is not an object");
    manifest_entry entry;
    const auto* path = object->if_contains("path");
    const auto* sha256 = object->if_contains("sha256");
    const auto* size = object->if_contains("size");
    if (path == nullptr || !path->is_string()) return bad(std::string(where) + " has no \"path\" string");
    entry.path = std::string(path->as_string());
    if (sha256 == nullptr || !sha256->is_string() || !crypto::is_sha256_hex(sha256->as_string()))
        return bad(std::string(where) + " (" + entry.path + ") has no \"sha256\" of 64 lower-case hex digits");
    entry.sha256 = std::string(sha256->as_string());
    if (size == nullptr || !(size->is_uint64() || (size->is_int64() && size->as_int64() >= 0)))
        return bad(std::string(where) + " (" + entry.path + ") has no non-negative \"size\"");
    entry.size = size->is_uint64() ? size->as_uint64() : static_cast<std::uint64_t>(size->as_int64());
    return entry;
}

}  // namespace

std::string to_json(const manifest& contents) {
    json::array blobs;
    blobs.reserve(contents.blobs.size());
    for (const auto& entry : contents.blobs) blobs.push_back(entry_json(entry));
    json::object root;
    root["format"] = manifest_format;
    root["format_version"] = manifest_format_version;
    root["created"] = contents.created;
    root["schema_version"] = contents.schema_version;
    root["file_rows"] = contents.file_rows;
    root["includes_blobs"] = contents.includes_blobs;
    root["catalog"] = entry_json(contents.catalog);
    root["blobs"] = std::move(blobs);
    return json::serialize(root) + "\n";
}

result<manifest> parse_manifest(std::string_view text) {
    boost::system::error_code failure;
    const auto value = json::parse(text, failure);
    if (failure) return bad("not valid JSON (" + failure.message() + "); the file is damaged or cut short");
    const auto* root = value.if_object();
    if (root == nullptr) return bad("not a JSON object");
    const auto* format = root->if_contains("format");
    if (format == nullptr || !format->is_string() || format->as_string() != manifest_format)
        return bad("\"format\" is not \"" + std::string(manifest_format) + "\"; this is not a wheelhouse backup");
    const auto* version = root->if_contains("format_version");
    if (version == nullptr || !version->is_int64()) return bad("no \"format_version\" number");
    if (version->as_int64() != manifest_format_version) {
        return bad("format_version " + std::to_string(version->as_int64()) + " is not " +
                   std::to_string(manifest_format_version) + "; restore it with the wheelhouse that wrote it");
    }
    manifest contents;
    if (const auto* created = root->if_contains("created"); created != nullptr && created->is_string())
        contents.created = std::string(created->as_string());
    const auto* schema = root->if_contains("schema_version");
    const auto* rows = root->if_contains("file_rows");
    const auto* includes = root->if_contains("includes_blobs");
    if (schema == nullptr || !schema->is_int64()) return bad("no \"schema_version\" number");
    if (rows == nullptr || !rows->is_int64()) return bad("no \"file_rows\" number");
    if (includes == nullptr || !includes->is_bool()) return bad("no \"includes_blobs\" true or false");
    contents.schema_version = schema->as_int64();
    contents.file_rows = rows->as_int64();
    contents.includes_blobs = includes->as_bool();

    const auto* catalog = root->if_contains("catalog");
    if (catalog == nullptr) return bad("no \"catalog\" entry");
    auto catalog_entry = parse_entry(*catalog, "\"catalog\"");
    if (!catalog_entry) return catalog_entry.error();
    if (catalog_entry->path != catalog_name) return bad("the catalog's path is not \"catalog.db\"");
    contents.catalog = std::move(catalog_entry).value();

    const auto* blobs = root->if_contains("blobs");
    if (blobs == nullptr || !blobs->is_array()) return bad("no \"blobs\" array");
    for (const auto& item : blobs->as_array()) {
        auto entry = parse_entry(item, "a \"blobs\" entry");
        if (!entry) return entry.error();
        const auto parts = storage::parse_blob_path(entry->path);
        if (!parts)
            return bad("\"" + entry->path + "\" is not a path of the blob store (blobs/sha256/ab/cd/<sha256>)");
        if (!parts->metadata && parts->sha256 != entry->sha256)
            return bad("the blob " + entry->path + " is listed with another digest, " + entry->sha256);
        contents.blobs.push_back(std::move(entry).value());
    }
    return contents;
}

}  // namespace wheelhouse::backup
