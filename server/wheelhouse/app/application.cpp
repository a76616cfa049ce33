#include "wheelhouse/app/application.hpp"

#include <spdlog/spdlog.h>

#include "wheelhouse/app/api_routes.hpp"
#include "wheelhouse/app/error_response.hpp"
#include "wheelhouse/app/file_routes.hpp"
#include "wheelhouse/app/metrics_route.hpp"
#include "wheelhouse/app/read_access.hpp"
#include "wheelhouse/app/remote_routes.hpp"
#include "wheelhouse/app/simple_routes.hpp"
#include "wheelhouse/catalog/catalog.hpp"
#include "wheelhouse/http/request_target.hpp"
#include "wheelhouse/transport/responses.hpp"

namespace wheelhouse::app {
namespace {

using transport::make_text_response;

bool is_read(http::verb method) { return method == http::verb::get || method == http::verb::head; }

transport::outgoing_response method_not_allowed(const http::request_header<>& request, std::string_view allow) {
    http::fields headers;
    headers.set(http::field::allow, allow);
    return make_text_response(request, http::status::method_not_allowed,
                              std::string(request.method_string()) + " is not allowed here; use " + std::string(allow),
                              std::move(headers));
}

}  // namespace

application::application(catalog::catalog& catalog, storage::blob_store& blobs, app_settings settings)
    : settings_(std::move(settings)),
      pages_(settings_.pages),
      downloads_(catalog),
      remote_(settings_.remote_client),
      context_{catalog, blobs, pages_, settings_, metrics_, &downloads_, &remote_},
      tokens_(catalog),
      ingest_workers_(std::max(1u, settings_.ingest_workers), settings_.ingest_queue,
                      [](std::string_view what) { spdlog::error("ingest worker: {}", what); }),
      uploads_(context_, tokens_, ingest_workers_,
               upload_settings{settings_.max_upload_bytes, std::chrono::seconds(5)}),
      admin_(context_, tokens_, ingest_workers_),
      remote_routes_(context_, tokens_, ingest_workers_),
      static_(built_in_static_assets()),
      remote_files_(context_, {settings_.proxy_downloads}) {
    context_.remote_files = &remote_files_;
    catalog.subscribe([this](std::string_view project) { pages_.invalidate_project(project); });
}

application::~application() { finish_ingests(); }

void application::finish_ingests() {
    remote_files_.stop();
    ingest_workers_.shutdown(concurrency::worker_pool::shutdown_mode::drain);
    uploads_.finish();  // the drained jobs' rows, committed and answered
}

transport::body_plan application::plan_body(const http::request_header<>& header) {
    auto target = http_target::parse(header.target());
    if (target && upload_routes::is_upload(header.method(), *target)) return uploads_.plan(header, *target);
    if (target && admin_routes::claims(header.method(), *target)) return admin_.plan(header);
    if (target && remote_routes::claims(*target)) return remote_routes_.plan(header);
    return {};
}

void application::handle(transport::incoming_request request, transport::responder respond) {
    if (request.sink) {  // only upload routes stream their bodies
        auto target = http_target::parse(request.header.target());
        return uploads_.handle(std::move(request), *target, respond);
    }
    if (auto target = http_target::parse(request.header.target());
        target && admin_routes::claims(request.header.method(), *target)) {
        return admin_.handle(std::move(request), *target, respond);
    }
    if (auto target = http_target::parse(request.header.target()); target && remote_routes::claims(*target)) {
        return remote_routes_.handle(std::move(request), *target, respond);
    }
    if (auto response = route(request, respond)) respond(std::move(*response));
}

std::optional<transport::outgoing_response> application::route(const transport::incoming_request& incoming,
                                                                const transport::responder& respond) {
    const auto& request = incoming.header;
    if (request.method() == http::verb::unknown) {
        return make_text_response(request, http::status::not_implemented,
                                  "method " + std::string(request.method_string()) + " is not supported");
    }
    auto target = http_target::parse(request.target());
    if (!target) return make_text_response(request, http::status::bad_request, target.error().message);
    const auto& segments = target->segments;
    const std::string_view first = segments.empty() ? std::string_view{} : std::string_view{segments.front()};

    // A private index answers nothing about its contents without a token, not even 404s.
    const bool reads_contents = first == "simple" || first == "variants" || first == "files" ||
                                (first == "api" && is_read(request.method()));
    if (settings_.private_index && reads_contents) {
        if (auto allowed = check_read_access(tokens_, request, project_read_by(*target)); !allowed)
            return error_response(request, allowed.error());
    }
    if (first == "simple") {
        if (!is_read(request.method())) return method_not_allowed(request, "GET, HEAD");
        return serve_simple(context_, request, *target, simple_index{"/simple/", 1, std::nullopt});
    }
    if (first == "variants") {
        if (!is_read(request.method())) return method_not_allowed(request, "GET, HEAD");
        return serve_variant_simple(context_, request, *target);
    }
    if (first == "files") {
        if (!is_read(request.method())) return method_not_allowed(request, "GET, HEAD");
        return serve_file(context_, request, *target, respond);
    }
    if (first == "legacy" || (first == "api" && segments.size() >= 3 && segments[2] == "files")) {
        return method_not_allowed(request, first == "legacy" ? "POST" : "PUT");
    }
    if (first == "api") return serve_api(context_, request, *target);
    if (first == "healthz" && segments.size() == 1) {
        if (!is_read(request.method())) return method_not_allowed(request, "GET, HEAD");
        return make_text_response(request, http::status::ok, "serving");
    }
    if (first == "metrics" && segments.size() == 1) {
        if (!is_read(request.method())) return method_not_allowed(request, "GET, HEAD");
        return serve_metrics(context_, request, ingest_workers_);
    }
    if (static_routes::claims(*target)) return static_.serve(request, *target);  // the admin catalog
    return make_text_response(request, http::status::not_found,
                              "no such page; the package index is at /simple/");
}

void application::watch_external_changes(net::io_context& context) {
    watch_timer_ = std::make_unique<net::steady_timer>(net::make_strand(context));
    poll_external_changes();
}

void application::poll_external_changes() {
    watch_timer_->expires_after(std::chrono::seconds(1));
    watch_timer_->async_wait([this](error_code ec) {
        if (ec) return;
        if (context_.catalog.changed_externally()) pages_.clear();
        poll_external_changes();
    });
}

}  // namespace wheelhouse::app
