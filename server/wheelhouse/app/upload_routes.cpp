#include "wheelhouse/app/upload_routes.hpp"

#include <charconv>

#include <boost/json.hpp>

#include "wheelhouse/app/answers.hpp"
#include "wheelhouse/app/route_access.hpp"
#include "wheelhouse/app/upload_sinks.hpp"
#include "wheelhouse/ingest/ingester.hpp"
#include "wheelhouse/transport/responses.hpp"
#include "wheelhouse/variants/build_variant.hpp"

namespace wheelhouse::app {
namespace {

using transport::outgoing_response;

outgoing_response accepted(const http::request_header<>& request, const ingest::ingest_result& ingested) {
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
                             {"url", "/files/" + file.sha256 + "/" + file.filename},
                             {"page", page},
                             {"variant", variants::to_json(file.variant)}};
    return text_or_json_response(request, status, std::move(text), std::move(json));
}

std::optional<std::string> digest_field(const upload::form_collector& form, std::string_view name) {
    const auto value = form.first_value(name);
    if (!value || value->empty()) return std::nullopt;  // twine sends "" for digests it has not
    return std::string(*value);
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
                                 const route_request& request) {
    auto reject = [&](const error& failure) {
        transport::body_plan plan;
        plan.how = transport::body_plan::kind::reject;
        plan.rejection = error_response(header, failure);
        return plan;
    };
    const bool raw = header.method() == http::verb::put;
    if (raw && request.capture("filename").empty())
        return reject(invalid("put the wheel's filename in the URL: PUT /api/v1/files/<filename>.whl"));

    const auto max_bytes = context.settings.max_upload_bytes;
    if (const auto length = header[http::field::content_length]; !length.empty()) {
        std::uint64_t declared = 0;
        const auto [end, ec] = std::from_chars(length.data(), length.data() + length.size(), declared);
        if (ec == std::errc{} && end == length.data() + length.size() && declared > max_bytes) {
            return reject(make_error(error_kind::too_large, "the upload is " + std::to_string(declared) +
                                                                " bytes; this index takes at most " +
                                                                std::to_string(max_bytes)));
        }
    }
    std::optional<std::string> boundary;
    if (!raw) {
        auto parsed = upload::boundary_from_content_type(header[http::field::content_type]);
        if (!parsed) return reject(parsed.error());
        boundary = std::move(*parsed);
    }
    auto target_file = spool_target::create(context.blobs);
    if (!target_file) return reject(target_file.error());

    transport::body_plan plan;
    plan.how = transport::body_plan::kind::stream;
    plan.limit = max_bytes;
    if (raw) plan.sink = std::make_shared<raw_upload_sink>(std::move(*target_file));
    else plan.sink = std::make_shared<form_upload_sink>(std::move(*target_file), *boundary);
    return plan;
}

route_answer ingest_upload(route_context& context, route_request& request) {
    auto& incoming = request.incoming;
    const auto& header = incoming.header;
    const auto& grant = *request.grant;  // the route needs a token

    ingest::ingest_options options;
    options.uploaded_by = grant.name;
    options.max_file_size = context.settings.max_upload_bytes;
    std::string filename;
    storage::spool_file spool;

    if (header.method() == http::verb::put) {
        auto& sink = static_cast<raw_upload_sink&>(*incoming.sink);
        filename = request.capture("filename");
        std::tie(spool, options.received) = sink.target().release();
    } else {
        auto& sink = static_cast<form_upload_sink&>(*incoming.sink);
        const auto& form = sink.form();
        if (const auto action = form.first_value(":action"); action && *action != "file_upload") {
            return error_response(header, invalid("':action' is '" + std::string(*action) +
                                                  "'; this index takes only file_upload"));
        }
        if (const auto protocol = form.first_value("protocol_version"); protocol && *protocol != "1") {
            return error_response(header, invalid("protocol_version " + std::string(*protocol) +
                                                  " is not supported; send 1"));
        }
        filename = form.content_filename();
        options.expected.sha256 = digest_field(form, "sha256_digest");
        options.expected.blake2_256 = digest_field(form, "blake2_256_digest");
        options.expected.md5 = digest_field(form, "md5_digest");
        // A filename that names no project is the ingester's to refuse, with the reason.
        if (const auto project = project_of_file(filename); !project.empty()) {
            if (auto allowed = request.may_act_on(project); !allowed) return error_response(header, allowed.error());
        }
        std::tie(spool, options.received) = sink.target().release();
    }
    incoming.sink.reset();

    auto ingested = context.ingester->ingest_spool(std::move(spool), filename, options);
    context.metrics.record_ingest(outcome_of(ingested), std::chrono::duration_cast<std::chrono::microseconds>(
                                                             std::chrono::steady_clock::now() - request.queued_at));
    if (!ingested) return error_response(header, ingested.error());
    return accepted(header, *ingested);
}

}  // namespace wheelhouse::app
