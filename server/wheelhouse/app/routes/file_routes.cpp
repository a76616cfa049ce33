#include "wheelhouse/app/routes/file_routes.hpp"

#include <fcntl.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstring>

#include <spdlog/spdlog.h>

#include "wheelhouse/app/answers.hpp"
#include "wheelhouse/app/download_answer.hpp"
#include "wheelhouse/app/file_lookups.hpp"
#include "wheelhouse/app/remote_downloads.hpp"
#include "wheelhouse/app/upstream_files.hpp"
#include "wheelhouse/catalog/catalog.hpp"
#include "wheelhouse/catalog/download_counter.hpp"
#include "wheelhouse/crypto/hasher.hpp"
#include "wheelhouse/distribution/file_name.hpp"
#include "wheelhouse/storage/blob_store.hpp"
#include "wheelhouse/storage/descriptor.hpp"
#include "wheelhouse/text/quoted.hpp"
#include "wheelhouse/transport/responses.hpp"

namespace wheelhouse::app {
namespace {

using transport::make_text_response;

// A download to count: the whole file, or the first part of it (not every resumed chunk).
bool starts_at_first_byte(const http::request_header<>& request) {
    const auto range = field_value(request, http::field::range);
    return range.empty() || range.starts_with("bytes=0-");
}

// Sends `path` (whose bytes hash to `sha256_hex`) whole or in part, or answers its conditionals.
transport::outgoing_response send_blob(const http::request_header<>& request, const std::filesystem::path& path,
                                       std::string_view sha256_hex, bool private_index) {
    storage::descriptor file{::open(path.c_str(), O_RDONLY | O_CLOEXEC)};
    struct stat info {};
    if (!file && (errno == EMFILE || errno == ENFILE || errno == ENOMEM)) {
        spdlog::warn("cannot open {} to send it: {}", path.string(), std::strerror(errno));
        return error_response(request, make_error(error_kind::unavailable,
                                                  "try again shortly: the server has no file descriptor free to "
                                                  "send this file (the administrator has the details in the log)"));
    }
    if (!file || ::fstat(file.get(), &info) != 0) {
        return make_text_response(request, http::status::internal_server_error,
                                  "the catalog lists this file but its bytes are missing from the store; "
                                  "run `wheelhouse fsck`");
    }
    // The blob was written once, when its first file was stored: its mtime is when its bytes came.
    const download_answer answer(request, sha256_hex, static_cast<std::uint64_t>(info.st_size), private_index,
                                 static_cast<std::int64_t>(info.st_mtime));
    if (auto done = answer.without_body()) return std::move(*done);
    const auto range = answer.range();
    const auto offset = range ? range->first : 0;
    const auto length = range ? range->length : static_cast<std::uint64_t>(info.st_size);
    return transport::make_file_response(
        answer.head(range.has_value()), {std::make_shared<storage::descriptor>(std::move(file)), offset, length});
}

// The bytes of a file this index holds itself (a row of mode local): under blobs/, or in the
// bucket, where the client is sent by a 302 to a presigned URL, or they are streamed through
// the index (--s3-downloads proxy), Range passed on and the whole file's sha256 checked, as a
// proxied release asset's. The page's link stays /files/<sha256>/…: no cache or lockfile sees
// the bucket's host.
std::optional<transport::outgoing_response> send_owned(const route_context& context,
                                                       const http::request_header<>& request,
                                                       const catalog::file_record& file,
                                                       const transport::responder& respond) {
    const auto* bucket = context.blobs.bucket();
    if (bucket == nullptr) return send_blob(request, context.blobs.blob_path(file.sha256), file.sha256,
                                            context.settings.private_index);
    // HEAD and conditionals need no byte: answered here, as a presigned GET URL takes no HEAD.
    const download_answer answer(request, file.sha256, file.size, context.settings.private_index,
                                 file.upload_time_ms / 1000);
    if (auto done = answer.without_body()) return std::move(*done);
    const auto lifetime = context.settings.bucket_url_lifetime;
    auto url = bucket->download_url(file.sha256, lifetime);
    if (context.bucket_client == nullptr) {
        // Sent with 90% of its life or more left and kept by caches for half of it, so no client
        // is sent to a URL about to expire.
        return redirect_download(request, url, context.settings.private_index, lifetime / 2);
    }
    catalog::file_record in_bucket = file;
    in_bucket.remote_url = std::move(url);
    in_bucket.fetch_url.reset();
    in_bucket.mode = catalog::download_mode::proxy;
    return context.remote_files.serve(request, in_bucket, respond,
                                       {.client = context.bucket_client, .kept = {}, .own_store = true});
}

// PEP 825: a release's variants.json, from its catalog row, answered as any download. Its URL
// holds its sha256, so the bytes there never change; a new file gets a new URL on the pages.
transport::outgoing_response send_release_variants(const route_context& context, const http::request_header<>& request,
                                                   std::string_view sha256, std::string_view filename) {
    const auto found = context.catalog.find_release_variants(sha256, filename);
    if (!found) {
        spdlog::error("GET {}: {}", request.target(), found.error().message);
        return make_text_response(request, http::status::internal_server_error,
                                  "the index could not read its catalog; the administrator has the details in the log");
    }
    const auto project = *found ? context.catalog.find_project((*found)->project)
                                : result<std::optional<catalog::project_record>>(std::nullopt);
    if (!*found || (project && *project && (*project)->status == catalog::project_status::quarantined)) {
        return make_text_response(request, http::status::not_found,
                                  "no file " + std::string(filename) + " with sha256 " + std::string(sha256) +
                                      " in this index; the release's current variants.json is linked on its "
                                      "project page");
    }
    auto content = std::make_shared<const std::string>(std::move((*found)->content));
    const download_answer answer(request, (*found)->sha256, content->size(), context.settings.private_index,
                                 (*found)->updated_ms / 1000, "application/json");
    return answer.with_body(std::move(content));
}

// A file no row names: one of an upstream project, sent when kept, else found and fetched
// (upstream_files.hpp).
std::optional<transport::outgoing_response> serve_upstream_file(const route_context& context,
                                                                const route_request& routed, std::string_view sha256,
                                                                std::string_view filename, bool wants_metadata) {
    const auto& request = routed.header();
    const auto kept = find_kept_upstream_bytes(context, sha256, filename, wants_metadata);
    if (!kept) return error_response(request, make_error(error_kind::internal, kept.error().message));
    if (kept->what == kept_upstream_bytes::kind::owned) return owned_file_refusal(request, filename);
    if (kept->what == kept_upstream_bytes::kind::kept) {
        const auto path = wants_metadata ? context.blobs.metadata_path(sha256) : context.blobs.blob_path(sha256);
        return send_blob(request, path, kept->digest, context.settings.private_index);
    }
    return fetch_upstream_file(context, routed, sha256, filename, wants_metadata);
}

// The bytes of /files/{sha256}/{filename}: the file the name says (a wheel, an sdist, the
// .metadata of either, a release's variants.json), or nullopt when a proxied download has taken
// routed.respond to answer once the remote host has.
// The bytes of a file the catalog holds (its row found), or its METADATA.
std::optional<transport::outgoing_response> serve_row(const route_context& context, const route_request& routed,
                                                      const file_lookup& found, bool wants_metadata) {
    const auto& request = routed.header();
    const auto* file = &found.file;
    if (found.quarantined) {
        return make_text_response(request, http::status::not_found,
                                  "project '" + file->project + "' is quarantined; its files are not offered");
    }
    if (!wants_metadata && request.method() == http::verb::get && starts_at_first_byte(request)) {
        context.downloads.record(file->id);
    }
    if (wants_metadata) {
        // An sdist whose PKG-INFO is not static has none to serve (PEP 643, 658).
        if (file->metadata_sha256.empty()) {
            return make_text_response(request, http::status::not_found,
                                      "no core metadata for " + file->filename +
                                          ": its PKG-INFO does not promise what a built wheel will say");
        }
        return send_blob(request, context.blobs.metadata_path(file->sha256), file->metadata_sha256,
                         context.settings.private_index);
    }
    // A cached remote file is served from disk once its verified copy is in the store.
    const bool cached = file->mode == catalog::download_mode::cache && context.blobs.has_blob(file->sha256);
    if (file->mode != catalog::download_mode::local && !cached) {
        return context.remote_files.serve(request, *file, routed.respond);
    }
    if (cached) return send_blob(request, context.blobs.blob_path(file->sha256), file->sha256, context.settings.private_index);
    return send_owned(context, request, *file, routed.respond);
}

// The bytes of /files/{sha256}/{filename}: the file the name says (a wheel, an sdist, the
// .metadata of either, a release's variants.json), or nullopt when a proxied download has taken
// routed.respond to answer once the remote host has.
std::optional<transport::outgoing_response> serve_file(const route_context& context, const route_request& routed) {
    const auto& request = routed.header();
    const auto sha256 = routed.capture("sha256");
    const auto requested = routed.capture("filename");
    if (!crypto::is_sha256_hex(sha256)) {
        return make_text_response(request, http::status::not_found,
                                  "file URLs have the form /files/<sha256>/<filename>");
    }
    // A name a row holds is served without parsing it again (distribution::row_requested); the
    // rest is parsed, for its kind or for the reason of its 404.
    if (const auto row = distribution::row_requested(requested)) {
        const auto found = context.lookups.find(context.catalog, sha256, row->row_filename);
        if (!found) {
            spdlog::error("GET {}: {}", request.target(), found.error().message);
            return make_text_response(request, http::status::internal_server_error,
                                      "the index could not read its catalog; the administrator has the details in the log");
        }
        if (*found) return serve_row(context, routed, **found, row->metadata);
    }
    const auto named = distribution::parse_file_name(requested);
    if (!named) {
        return make_text_response(request, http::status::not_found,
                                  "no file " + text::quoted(requested) + " in this index: " + named.error().message);
    }
    if (named->kind == distribution::file_kind::release_variants)
        return send_release_variants(context, request, sha256, named->row_filename());
    return serve_upstream_file(context, routed, sha256, named->row_filename(), named->is_metadata());
}

}  // namespace

route_answer download_file(route_context& context, route_request& request) {
    return serve_file(context, request);
}

route_answer download_metadata(route_context& context, route_request& request) {
    auto answer = serve_file(context, request);
    // pip fetches METADATA for every candidate: readahead(2) leaves the bytes in memory for the
    // session's sendfile, so the I/O thread does not wait on the disk.
    if (const auto* sent = answer ? std::get_if<transport::file_response>(&answer->shape) : nullptr)
        ::readahead(sent->body.file->get(), static_cast<off64_t>(sent->body.offset), sent->body.length);
    return answer;
}

route_answer file_provenance(route_context& context, route_request& request) {
    const std::string filename(request.capture("filename"));
    auto found = context.catalog.find_file(filename);
    if (!found) return request.refuse(found.error());
    const bool named_so = *found && (*found)->project == request.capture("project") &&
                          (*found)->normalized_version == request.capture("version");
    auto provenance = named_so ? context.catalog.provenance_of(filename) : std::optional<std::string>();
    if (!provenance) return request.refuse(provenance.error());
    if (!*provenance) {
        return request.refuse(make_error(error_kind::not_found,
                                         "no provenance for " + text::quoted(filename, 200) +
                                             ": it was uploaded without PEP 740 attestations, or is not in this index "
                                             "under that project and version"));
    }
    return transport::make_shared_response(request.header(), http::status::ok, "application/vnd.pypi.integrity.v1+json",
                                           std::make_shared<const std::string>(std::move(**provenance)));
}

}  // namespace wheelhouse::app
