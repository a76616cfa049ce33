#include "wheelhouse/app/upload_routes.hpp"

#include <charconv>

#include <boost/json.hpp>
#include <spdlog/spdlog.h>

#include "wheelhouse/app/authorization.hpp"
#include "wheelhouse/app/error_response.hpp"
#include "wheelhouse/app/upload_sinks.hpp"
#include "wheelhouse/pep427/wheel_filename.hpp"
#include "wheelhouse/transport/responses.hpp"
#include "wheelhouse/variants/build_variant.hpp"

namespace wheelhouse::app {
namespace {

using transport::outgoing_response;

constexpr access_rule upload_rule{auth::scope::upload, "uploads",
                                  "twine upload -u __token__ -p <token>, or curl -u __token__:<token>"};

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

// The PEP 503 name in a wheel filename, when the filename parses; otherwise the ingester will
// refuse it with the reason, after the scope check has nothing to say.
std::string project_of(std::string_view filename) {
    auto parsed = pep427::parse_wheel_filename(filename);
    return parsed ? parsed->normalized_name : std::string();
}

result<void> check_project(const auth::token_grant& grant, std::string_view filename) {
    const auto project = project_of(filename);
    if (project.empty() || auth::permits(grant, auth::scope::upload, project)) return {};
    return make_error(error_kind::forbidden, "token '" + grant.name + "' may not upload to project '" + project + "'");
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

upload_routes::upload_routes(route_context& context, auth::token_store& tokens, concurrency::worker_pool& workers,
                             upload_settings settings)
    : context_(context),
      tokens_(tokens),
      workers_(workers),
      settings_(settings),
      // As many rows may wait for their commit as uploads may wait for a worker or be validated;
      // past that the workers wait, their queue fills, and new uploads get 503 at their headers.
      ingester_(context.catalog, context.blobs, {.capacity = workers.capacity() + workers.thread_count()}) {}

bool upload_routes::is_upload(http::verb method, const http_target::request_target& target) {
    const auto& segments = target.segments;
    if (method == http::verb::post && !segments.empty() && segments[0] == "legacy")
        return segments.size() == 1 || (segments.size() == 2 && segments[1].empty());
    return method == http::verb::put && segments.size() == 4 && segments[0] == "api" && segments[1] == "v1" &&
           segments[2] == "files";
}

transport::body_plan upload_routes::plan(const http::request_header<>& request,
                                         const http_target::request_target& target) {
    auto reject = [&](const error& failure, http::fields extra = {}) {
        transport::body_plan plan;
        plan.how = transport::body_plan::kind::reject;
        plan.rejection = error_response(request, failure, std::move(extra));
        return plan;
    };

    // Credentials first: an unauthenticated client learns nothing else and sends no body.
    auto grant = authorize(tokens_, request, upload_rule);
    if (!grant) return reject(grant.error());
    const auto& segments = target.segments;
    const bool raw = request.method() == http::verb::put;
    if (raw) {
        if (segments[3].empty())
            return reject(invalid("put the wheel's filename in the URL: PUT /api/v1/files/<filename>.whl"));
        if (auto allowed = check_project(*grant, segments[3]); !allowed) return reject(allowed.error());
    }

    if (const auto length = request[http::field::content_length]; !length.empty()) {
        std::uint64_t declared = 0;
        const auto [end, ec] = std::from_chars(length.data(), length.data() + length.size(), declared);
        if (ec == std::errc{} && end == length.data() + length.size() && declared > settings_.max_upload_bytes) {
            return reject(make_error(error_kind::too_large, "the upload is " + std::to_string(declared) +
                                                                " bytes; this index takes at most " +
                                                                std::to_string(settings_.max_upload_bytes)));
        }
    }
    if (workers_.queue_depth() >= workers_.capacity()) {
        context_.metrics.record_ingest(metrics::ingest_outcome::busy);
        http::fields retry;
        retry.set(http::field::retry_after, std::to_string(settings_.retry_after.count()));
        return reject(make_error(error_kind::unavailable, "the index is busy ingesting other uploads; retry shortly"),
                      std::move(retry));
    }

    std::optional<std::string> boundary;
    if (!raw) {
        auto parsed = upload::boundary_from_content_type(request[http::field::content_type]);
        if (!parsed) return reject(parsed.error());
        boundary = std::move(*parsed);
    }
    auto target_file = spool_target::create(context_.blobs);
    if (!target_file) {
        spdlog::error("upload: {}", target_file.error().message);
        return reject(target_file.error());
    }

    transport::body_plan plan;
    plan.how = transport::body_plan::kind::stream;
    plan.limit = settings_.max_upload_bytes;
    if (raw) plan.sink = std::make_shared<raw_upload_sink>(std::move(*target_file));
    else plan.sink = std::make_shared<form_upload_sink>(std::move(*target_file), *boundary);
    return plan;
}

void upload_routes::handle(transport::incoming_request request, const http_target::request_target& target,
                           const transport::responder& respond) {
    const auto& header = request.header;
    // plan() authenticated these headers; asking again gives the grant (the token may have
    // been revoked meanwhile, which is right to honour).
    auto grant = authorize(tokens_, header, upload_rule);
    if (!grant) return respond(error_response(header, grant.error()));

    ingest::ingest_options options;
    options.uploaded_by = grant->name;
    options.max_file_size = settings_.max_upload_bytes;
    std::string filename;
    storage::spool_file spool;

    if (header.method() == http::verb::put) {
        auto& sink = static_cast<raw_upload_sink&>(*request.sink);
        filename = target.segments[3];
        std::tie(spool, options.received) = sink.target().release();
    } else {
        auto& sink = static_cast<form_upload_sink&>(*request.sink);
        const auto& form = sink.form();
        if (const auto action = form.first_value(":action"); action && *action != "file_upload") {
            return respond(error_response(header, invalid("':action' is '" + std::string(*action) +
                                                  "'; this index takes only file_upload")));
        }
        if (const auto protocol = form.first_value("protocol_version"); protocol && *protocol != "1") {
            return respond(error_response(header, invalid("protocol_version " + std::string(*protocol) +
                                                  " is not supported; send 1")));
        }
        filename = form.content_filename();
        options.expected.sha256 = digest_field(form, "sha256_digest");
        options.expected.blake2_256 = digest_field(form, "blake2_256_digest");
        options.expected.md5 = digest_field(form, "md5_digest");
        if (auto allowed = check_project(*grant, filename); !allowed) return respond(error_response(header, allowed.error()));
        std::tie(spool, options.received) = sink.target().release();
    }
    request.sink.reset();
    // The token's last use goes into the upload's own commit, not a synced commit of its own.
    options.in_same_commit = [token = grant->name](sqlite::connection& db) { return auth::token_store::mark_used(db, token); };

    // The worker validates and hands the row to the ingester's commit queue; the answer is
    // written from there once the batch's commit is synced, while the worker takes the next job.
    auto job = [this, header = request.header, filename = std::move(filename), options = std::move(options),
                spool = std::move(spool), respond, queued = std::chrono::steady_clock::now(),
                coming = ingester_.expect()]() mutable {
        ingester_.ingest_spool(std::move(spool), filename, options,
                               [this, header, respond, queued](result<ingest::ingest_result> ingested) {
            context_.metrics.record_ingest(outcome_of(ingested), std::chrono::duration_cast<std::chrono::microseconds>(
                                                                     std::chrono::steady_clock::now() - queued));
            if (!ingested) {
                if (ingested.error().kind == error_kind::internal) spdlog::error("upload: {}", ingested.error().message);
                return respond(refusal(header, ingested.error()));
            }
            respond(accepted(header, *ingested));
        });
    };
    concurrency::job work(std::move(job));
    if (!workers_.try_submit(std::move(work))) {
        context_.metrics.record_ingest(metrics::ingest_outcome::busy);
        respond(refusal(request.header, make_error(error_kind::unavailable,
                                                   "the index is busy ingesting other uploads; retry shortly")));
    }
}

void upload_routes::finish() { ingester_.finish_commits(); }

transport::outgoing_response upload_routes::refusal(const http::request_header<>& request, const error& failure) const {
    // Busy and a full disk alike pass: a client told when to come back does so.
    http::fields retry;
    if (failure.kind == error_kind::unavailable) {
        retry.set(http::field::retry_after, std::to_string(settings_.retry_after.count()));
    }
    return error_response(request, failure, std::move(retry));
}

}  // namespace wheelhouse::app
