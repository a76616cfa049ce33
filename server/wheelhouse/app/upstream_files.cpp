#include "wheelhouse/app/upstream_files.hpp"

#include <charconv>
#include <ctime>

#include <spdlog/spdlog.h>

#include "wheelhouse/app/answers.hpp"
#include "wheelhouse/app/download_answer.hpp"
#include "wheelhouse/app/remote_downloads.hpp"
#include "wheelhouse/catalog/upstream_rows.hpp"
#include "wheelhouse/crypto/hasher.hpp"
#include "wheelhouse/error_text.hpp"
#include "wheelhouse/storage/blob_store.hpp"
#include "wheelhouse/transport/responses.hpp"
#include "wheelhouse/upstream/page_store.hpp"

namespace wheelhouse::app {
namespace {

// METADATA is a few KiB; a file past this is no METADATA.
constexpr std::uint64_t max_metadata_bytes = 16u << 20;

struct wanted_file {
    std::string sha256;
    std::string filename;
    bool metadata = false;
};

// Where an upstream page lists the wanted file.
struct found_file {
    const upstream::upstream_index* upstream = nullptr;
    std::string project;
    upstream::upstream_file file;
};

// Owned names (a project here, or reserved) are never served from upstream, whatever was kept.
result<bool> owned_now(const route_context& context, std::string_view project) {
    auto facts = catalog::facts_of_name(context.catalog, project);
    if (!facts) return facts.error();
    return upstream::source_of(project, facts->known_locally, facts->reserved_patterns, true) !=
           upstream::name_source::upstream;
}

// The entry of `page` with this very name and sha256, if any.
const upstream::upstream_file* listed_on(const upstream::page_outcome& outcome, const wanted_file& wanted) {
    if (outcome.what != upstream::page_outcome::kind::page) return nullptr;
    const auto& page = outcome.kept->page;
    if (!page || page->status == "quarantined") return nullptr;
    for (const auto& file : page->files) {
        if (file.filename == wanted.filename && file.sha256 == wanted.sha256) return &file;
    }
    return nullptr;
}

// The file on the page of each project its name may belong to, at each upstream that project
// may come from: the entry with this very name and sha256. Pages already kept are looked at
// first (the page pip read before asking for the file), so no other upstream is asked for a
// page it need not give. An upstream's failure is returned when no other page had the file.
result<std::optional<found_file>> find_on_upstreams(const route_context& context, const wanted_file& wanted) {
    const auto projects = upstream::projects_named_by(wanted.filename);
    for (const auto& project : projects) {
        for (const auto* each : context.settings.upstreams.upstreams_for(project)) {
            const auto kept = context.upstream_pages->find(*each, project);
            if (!kept || kept->stale()) continue;
            if (const auto* file = listed_on(*kept, wanted)) return std::optional<found_file>(found_file{each, project, *file});
        }
    }
    std::optional<error> failure;
    for (const auto& project : projects) {
        for (const auto* each : context.settings.upstreams.upstreams_for(project)) {
            auto outcome = context.upstream_pages->get_now(*each, project);
            if (outcome.what == upstream::page_outcome::kind::owned) break;  // never from any upstream
            if (outcome.what == upstream::page_outcome::kind::failed) {
                failure = outcome.failure;
                continue;
            }
            if (const auto* file = listed_on(outcome, wanted)) return std::optional<found_file>(found_file{each, project, *file});
        }
    }
    if (failure) return *failure;
    return std::optional<found_file>();
}

std::optional<std::uint64_t> parse_number(std::string_view text) {
    std::uint64_t value = 0;
    const auto [end, failure] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (failure != std::errc{} || end != text.data() + text.size() || text.empty()) return std::nullopt;
    return value;
}

// The file's length as its host says it, for a page that gives none (PEP 503 HTML): the head of
// a one-byte range, the body never read.
result<std::uint64_t> size_at(remote::http_client& client, const std::string& url) {
    remote::fetch_request request;
    request.url = url;
    request.headers.emplace_back("Range", "bytes=0-0");
    std::optional<std::uint64_t> size;
    const auto enough = make_error(error_kind::internal, "enough");
    auto fetched = client.fetch_to(
        request, [](std::span<const char>) -> result<void> { return {}; },
        [&](const remote::fetch_response& head) -> result<void> {
            const auto range = head.header("content-range");
            if (head.status == 206 && range.find('/') != std::string_view::npos) size = parse_number(range.substr(range.find('/') + 1));
            else if (head.status == 200) size = parse_number(head.header("content-length"));
            if (!size) {
                return make_error(error_kind::upstream, url + " answered HTTP " + std::to_string(head.status) +
                                                            " without the file's length");
            }
            return enough;
        });
    if (size) return *size;
    return fetched ? make_error(error_kind::upstream, url + " sent no head") : fetched.error();
}

catalog::kept_upstream_file kept_row(const found_file& found) {
    catalog::kept_upstream_file row;
    row.sha256 = found.file.sha256;
    row.filename = found.file.filename;
    row.project = found.project;
    row.upstream = found.upstream->name;
    row.url = found.file.url;
    return row;
}

// The .metadata, fetched whole, checked against the page's hash, kept, then sent.
transport::outgoing_response fetch_metadata(const route_context& context, const http::request_header<>& request,
                                            const found_file& found) {
    const auto& file = found.file;
    if (!file.metadata_sha256) {
        return transport::make_text_response(request, http::status::not_found,
                                             "no core metadata for " + file.filename + ": its upstream page gives none");
    }
    remote::fetch_request fetch;
    fetch.url = file.url + ".metadata";
    fetch.max_body = max_metadata_bytes;
    auto answer = context.upstream_client->fetch(fetch);
    if (answer && answer->status != 200)
        answer = make_error(error_kind::upstream, fetch.url + " answered HTTP " + std::to_string(answer->status));
    if (answer && crypto::sha256_hex(answer->body) != *file.metadata_sha256) {
        answer = make_error(error_kind::upstream, fetch.url + " sent metadata whose sha256 is " +
                                                      crypto::sha256_hex(answer->body) + ", not the page's " +
                                                      *file.metadata_sha256 + "; nothing was kept");
    }
    if (!answer) {
        spdlog::warn("upstream {}: {}", found.upstream->name, answer.error().message);
        return error_response(request, make_error(answer.error().kind == error_kind::timeout ? error_kind::timeout
                                                                                            : error_kind::upstream,
                                                  "the upstream index " + found.upstream->name +
                                                      " failed to give the core metadata of " + file.filename,
                                                  answer.error().message));
    }
    if (auto put = context.blobs.put_metadata(file.sha256, answer->body); !put) {
        spdlog::warn("upstream: keeping the metadata of {} failed: {}", file.filename, put.error().message);
    } else {
        auto row = kept_row(found);
        row.metadata_sha256 = *file.metadata_sha256;
        if (auto recorded = catalog::record_kept_file(context.catalog, row); !recorded)
            spdlog::warn("upstream: recording the metadata of {} failed: {}", file.filename, recorded.error().message);
    }
    auto body = std::make_shared<const std::string>(std::move(answer->body));
    // Stored just now, as a kept copy's mtime will say when it is served from the store.
    return download_answer(request, *file.metadata_sha256, body->size(), context.settings.private_index,
                           static_cast<std::int64_t>(std::time(nullptr)))
        .with_body(std::move(body));
}

// The file streamed through remote_downloads in cache mode, its verified copy recorded once kept.
std::optional<transport::outgoing_response> fetch_file(const route_context& context,
                                                       const http::request_header<>& request, const found_file& found,
                                                       const transport::responder& respond) {
    auto size = found.file.size ? result<std::uint64_t>(*found.file.size) : size_at(*context.upstream_client, found.file.url);
    if (!size) {
        return error_response(request, make_error(error_kind::upstream,
                                                  "the upstream index " + found.upstream->name + " failed to give " +
                                                      found.file.filename,
                                                  size.error().message));
    }
    catalog::file_record record;
    record.project = found.project;
    record.filename = found.file.filename;
    record.sha256 = found.file.sha256;
    record.size = *size;
    record.mode = catalog::download_mode::cache;
    record.remote_url = found.file.url;
    auto row = kept_row(found);
    row.size = *size;
    auto kept = [&catalog = context.catalog, row] {
        if (auto recorded = catalog::record_kept_file(catalog, row); !recorded)
            spdlog::warn("upstream: recording {} failed: {}", row.filename, recorded.error().message);
    };
    return context.remote_files.serve(request, record, respond, {context.upstream_client, std::move(kept)});
}

void find_and_fetch(const route_context& context, const http::request_header<>& request, const wanted_file& wanted,
                    const transport::responder& respond) {
    auto found = find_on_upstreams(context, wanted);
    if (!found) return respond(error_response(request, found.error()));
    if (!*found) {
        return respond(transport::make_text_response(
            request, http::status::not_found,
            "no file " + wanted.filename + " with sha256 " + wanted.sha256 + " in this index or its upstream indexes"));
    }
    // Asked again right before a byte is fetched, whatever page was kept: an owned name's file
    // never comes from upstream, and a catalog that cannot tell refuses (fails closed).
    const auto owned = owned_now(context, (*found)->project);
    if (!owned) return respond(error_response(request, owned.error()));
    if (*owned) return respond(owned_file_refusal(request, wanted.filename));
    if (context.settings.upstream_pages.offline) {
        return respond(error_response(request, make_error(error_kind::timeout,
                                                          "this index runs --offline and has not kept " +
                                                              wanted.filename + (wanted.metadata ? ".metadata" : "") +
                                                              " from the upstream index " + (*found)->upstream->name)));
    }
    if (wanted.metadata) return respond(fetch_metadata(context, request, **found));
    if (auto answer = fetch_file(context, request, **found, respond)) respond(std::move(*answer));
}

}  // namespace

transport::outgoing_response owned_file_refusal(const http::request_header<>& request, std::string_view filename) {
    return transport::make_text_response(request, http::status::not_found,
                                         std::string(filename) + " belongs to a project this index owns; files of it "
                                                                 "come from this index only");
}

result<kept_upstream_bytes> find_kept_upstream_bytes(const route_context& context, std::string_view sha256,
                                                     std::string_view filename, bool metadata) {
    auto kept = catalog::find_kept_file(context.catalog, sha256, filename);
    if (!kept) return kept.error();
    if (!*kept) return kept_upstream_bytes{};
    const auto owned = owned_now(context, (*kept)->project);
    if (!owned) return owned.error();
    if (*owned) return kept_upstream_bytes{kept_upstream_bytes::kind::owned, {}};
    if (metadata && !(*kept)->metadata_sha256.empty() && context.blobs.has_metadata(sha256))
        return kept_upstream_bytes{kept_upstream_bytes::kind::kept, (*kept)->metadata_sha256};
    if (!metadata && (*kept)->size > 0 && context.blobs.has_blob(sha256))
        return kept_upstream_bytes{kept_upstream_bytes::kind::kept, std::string(sha256)};
    return kept_upstream_bytes{};
}

std::optional<transport::outgoing_response> fetch_upstream_file(const route_context& context,
                                                                const route_request& routed, std::string_view sha256,
                                                                std::string_view filename, bool metadata) {
    const auto& request = routed.header();
    if (!context.upstream_pages || context.settings.upstream_link_files) {
        return transport::make_text_response(request, http::status::not_found,
                                             "no file " + std::string(filename) + " with sha256 " + std::string(sha256) +
                                                 " in this index");
    }
    wanted_file wanted{std::string(sha256), std::string(filename), metadata};
    auto job = [&context, header = request, wanted = std::move(wanted), respond = routed.respond] {
        find_and_fetch(context, header, wanted, respond);
    };
    if (!context.outbound_workers.try_submit(concurrency::job(std::move(job))))
        return routed.busy(lane::outbound);  // the fetch's lane, not the row's: see route_request::busy
    return std::nullopt;
}

}  // namespace wheelhouse::app
