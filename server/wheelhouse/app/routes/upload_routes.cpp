#include "wheelhouse/app/routes/upload_routes.hpp"

#include <algorithm>
#include <charconv>
#include <chrono>

#include <boost/json.hpp>

#include "wheelhouse/app/answers.hpp"
#include "wheelhouse/app/route_access.hpp"
#include "wheelhouse/app/upload_sinks.hpp"
#include "wheelhouse/attest/provenance.hpp"
#include "wheelhouse/error_text.hpp"
#include "wheelhouse/auth/build_labels.hpp"
#include "wheelhouse/auth/token_store.hpp"
#include "wheelhouse/ingest/ingester.hpp"
#include "wheelhouse/oidc/publisher_store.hpp"
#include "wheelhouse/transport/responses.hpp"
#include "wheelhouse/variants/build_variant.hpp"

namespace wheelhouse::app {
namespace {

using transport::outgoing_response;

outgoing_response accepted(const http::request_header<>& request, const ingest::ingest_result& ingested,
                           std::string_view files_base) {
    const auto& file = ingested.file;
    const bool created = ingested.outcome == ingest::ingest_outcome::created;
    const auto status = created ? http::status::created : http::status::ok;
    const std::string page = "/simple/" + file.project + "/";
    std::string text = std::string(created ? "201 Created: " : "200 OK: ") + file.filename + " (sha256 " +
                       file.sha256 + ") " + (created ? "is now" : "was already") + " in the index at " + page;
    boost::json::object json{{"filename", file.filename},
                             {"project", file.project},
                             {"version", file.normalized_version},
                             {"sha256", file.sha256},
                             {"size", file.size},
                             {"created", created},
                             {"url", std::string(files_base) + file.sha256 + "/" + file.filename},
                             {"page", page},
                             {"variant", variants::to_json(file.variant)}};
    return text_or_json_response(request, status, std::move(text), std::move(json));
}

std::optional<std::string> digest_field(const upload::form_collector& form, std::string_view name) {
    const auto value = form.first_value(name);
    if (!value || value->empty()) return std::nullopt;  // twine sends "" for digests it has not
    return std::string(*value);
}

// PEP 740: the provenance to keep from the form's `attestations` field; "" when it sent none,
// or when this index checks none (no --sigstore-trust-root: nothing is served as checked).
// Attestations must be signed by the trusted publisher whose exchange minted the upload token,
// as on PyPI; an API token's upload that carries them is refused, not stored without them.
result<std::string> provenance_of_form(const route_context& context, const auth::token_grant& grant,
                                       const upload::form_collector& form, std::string_view filename,
                                       std::string_view sha256) {
    const auto& fields = form.fields();
    if (std::count_if(fields.begin(), fields.end(), [](const auto& one) { return one.name == "attestations"; }) > 1)
        return invalid("send one 'attestations' field, a JSON list of them all: this upload has several");
    const auto field = form.first_value("attestations");
    const auto& root = context.settings.publishing.sigstore_root;
    if (!field || field->empty() || *field == "[]" || !root) return std::string();
    if (!grant.publisher_id) {
        return invalid("upload without attestations, or publish through a trusted publisher: this index takes PEP 740 "
                       "attestations only with a token a trusted publisher minted");
    }
    auto publisher = context.publishers.find(*grant.publisher_id);
    if (!publisher) return publisher.error();
    if (!*publisher) {
        return make_error(error_kind::forbidden, "mint a new token: the trusted publisher that minted this one is gone");
    }
    const auto now = std::chrono::duration_cast<std::chrono::seconds>(
        std::chrono::system_clock::now().time_since_epoch()).count();
    auto provenance = attest::provenance_of_upload(*root, **publisher, *field, filename, sha256, now);
    if (!provenance) return invalid("upload without attestations, or fix them: " + provenance.error().message);
    return provenance;
}

metrics::ingest_outcome outcome_of(const result<ingest::ingest_result>& ingested) {
    if (ingested) {
        return ingested->outcome == ingest::ingest_outcome::created ? metrics::ingest_outcome::created
                                                                    : metrics::ingest_outcome::identical;
    }
    switch (ingested.error().kind) {
        case error_kind::invalid: return metrics::ingest_outcome::invalid;
        case error_kind::conflict: return metrics::ingest_outcome::conflict;
        case error_kind::too_large: return metrics::ingest_outcome::too_large;
        case error_kind::unavailable: return metrics::ingest_outcome::busy;
        default: return metrics::ingest_outcome::failed;
    }
}

}  // namespace

transport::body_plan plan_upload(route_context& context, const http::request_header<>& header,
                                 route_request& request) {
    auto reject = [&](const error& failure) {
        transport::body_plan plan;
        plan.how = transport::body_plan::kind::reject;
        plan.rejection = request.refuse(failure);
        return plan;
    };
    const bool raw = request.matched->body == body_kind::raw_upload;
    if (raw && request.capture("filename").empty())
        return reject(invalid("put the file's name in the URL: PUT /api/v1/files/<filename>.whl (or .tar.gz)"));

    const auto max_bytes = context.settings.max_upload_bytes;
    if (const auto length = field_value(header, http::field::content_length); !length.empty()) {
        std::uint64_t declared = 0;
        const auto [end, ec] = std::from_chars(length.data(), length.data() + length.size(), declared);
        if (ec == std::errc{} && end == length.data() + length.size() && declared > max_bytes) {
            return reject(make_error(error_kind::too_large,
                                     "send a smaller file: this index takes at most " + std::to_string(max_bytes) +
                                         " bytes",
                                     "the upload is " + std::to_string(declared) +
                                         " bytes; an admin sets the limit with --max-upload-size"));
        }
    }
    std::optional<std::string> boundary;
    if (!raw) {
        auto parsed = upload::boundary_from_content_type(field_value(header, http::field::content_type));
        if (!parsed) return reject(parsed.error());
        boundary = std::move(*parsed);
    }
    auto target_file = spool_target::create(context.blobs, max_bytes);
    if (!target_file) return reject(target_file.error());

    // A raw upload's filename was checked with the headers, and it declares no sha256 to send early by.
    auto may_store_early = [grant = request.grant, needed = request.matched->needs](std::string_view filename) {
        return grant && app::may_store_early(*grant, needed, filename);
    };
    auto sink = raw ? std::make_shared<upload_sink>(std::move(*target_file))
                    : std::make_shared<upload_sink>(std::move(*target_file), *boundary, std::move(may_store_early));
    request.planned_upload = sink;
    transport::body_plan plan;
    plan.how = transport::body_plan::kind::stream;
    plan.limit = max_bytes;
    plan.sink = std::move(sink);
    return plan;
}

route_answer ingest_upload(route_context& context, route_request& request) {
    const auto& header = request.header();
    const auto& grant = *request.grant;  // the route needs a token

    ingest::ingest_options options;
    options.uploaded_by = grant.name;
    options.max_file_size = context.settings.max_upload_bytes;
    std::string filename;
    // The spool is this function's from here: a refusal below removes it as it returns,
    // before the answer is written, so a refused client never finds its bytes in tmp/.
    const auto sink = std::move(request.upload);
    received_upload received = sink->target().release();

    if (sink->form() == nullptr) {
        filename = request.capture("filename");
    } else {
        const auto& form = *sink->form();
        if (const auto action = form.first_value(":action"); action && *action != "file_upload") {
            return request.refuse(invalid("':action' is '" + std::string(*action) + "'; this index takes only file_upload"));
        }
        if (const auto protocol = form.first_value("protocol_version"); protocol && *protocol != "1") {
            return request.refuse(invalid("protocol_version " + std::string(*protocol) + " is not supported; send 1"));
        }
        filename = form.content_filename();
        options.expected.sha256 = digest_field(form, "sha256_digest");
        options.expected.blake2_256 = digest_field(form, "blake2_256_digest");
        options.expected.md5 = digest_field(form, "md5_digest");
        // The project is the file's, named by its filename as the ingester reads it.
        auto project = may_act_on_file(request, filename);
        if (!project) return request.refuse(project.error());
        if (const auto named = form.first_value("name")) options.form_project = std::string(*named);
        auto provenance = provenance_of_form(context, grant, form, filename, received.digests.sha256);
        if (!provenance) return request.refuse(provenance.error());
        options.provenance = std::move(*provenance);
    }
    options.received = received.digests;
    options.early_blob = std::move(received.early);
    // A token a trusted publisher minted may be limited to builds by label (auth/build_labels.hpp).
    if (auto allowed = auth::permits_file(grant, filename); !allowed) return request.refuse(allowed.error());
    // The token, checked at the headers, is checked again in the commit that would list the file
    // (a revocation while the body arrived stores nothing); its last use goes into that commit.
    options.in_same_commit = [token = grant.name](sqlite::connection& db) {
        return auth::token_store::confirm_and_mark_used(db, token);
    };

    // This worker validates and hands the row to the group commit; the answer is written from
    // the commit queue's thread once the batch's commit is synced, while the worker goes on.
    context.ingester.ingest_spool(std::move(received.spool), filename, options,
                                   [&context, header, answers = request.matched->answers, respond = request.respond,
                                    queued = request.queued_at](result<ingest::ingest_result> ingested) {
        context.metrics.record_ingest(outcome_of(ingested), std::chrono::duration_cast<std::chrono::microseconds>(
                                                                 std::chrono::steady_clock::now() - queued));
        // A full disk is unavailable like a busy queue, and told when to come back alike
        // (error_response's Retry-After); nothing of the upload was kept.
        respond(ingested ? accepted(header, *ingested, context.settings.files_base)
                         : error_response(header, ingested.error(), answers));
    });
    return std::nullopt;
}

}  // namespace wheelhouse::app
