#include "wheelhouse/app/application.hpp"

#include <algorithm>
#include <atomic>
#include <cctype>
#include <optional>
#include <ranges>
#include <stdexcept>

#include <spdlog/spdlog.h>

#include "wheelhouse/app/answers.hpp"
#include "wheelhouse/app/route_access.hpp"
#include "wheelhouse/app/route_table.hpp"
#include "wheelhouse/app/routes/upload_routes.hpp"
#include "wheelhouse/catalog/catalog.hpp"
#include "wheelhouse/remote/issuer_key_fetcher.hpp"
#include "wheelhouse/catalog/upstream_rows.hpp"
#include "wheelhouse/transport/responses.hpp"

namespace wheelhouse::app {
namespace {

// Whether a body follows the headers (RFC 9112 §6.3): a refusal that leaves it unread must close.
bool announces_body(const http::request_header<>& header) {
    if (header.find(http::field::transfer_encoding) != header.end()) return true;
    const auto length = field_value(header, http::field::content_length);
    return !length.empty() && length != "0";
}

std::vector<route> all_routes(std::span<const route> extra) {
    std::vector<route> routes(route_table().begin(), route_table().end());
    routes.insert(routes.end(), extra.begin(), extra.end());
    return routes;
}

oidc::exchange_settings exchange_settings_of(const trusted_publishing_settings& publishing) {
    oidc::exchange_settings out;
    out.audience = publishing.audience;
    out.token_lifetime = publishing.token_lifetime;
    return out;
}

// Owned names (a project here, or reserved) never come from upstream; asked by each page flight.
upstream::page_store::ownership_check owned_in(const catalog::catalog& catalog) {
    return [&catalog](std::string_view project) -> result<bool> {
        auto facts = catalog::facts_of_name(catalog, project);
        if (!facts) return facts.error();
        return upstream::source_of(project, facts->known_locally, facts->reserved_patterns, true) !=
               upstream::name_source::upstream;
    };
}

// The page store of the upstream indexes, or null when none is configured.
std::unique_ptr<upstream::page_store> upstream_pages_of(remote::http_client& client, const app_settings& settings,
                                                        const catalog::catalog& catalog) {
    if (settings.upstreams.empty()) return nullptr;
    return std::make_unique<upstream::page_store>(
        client, settings.upstreams, settings.upstream_pages,
        render::upstream_links{settings.files_base, settings.upstream_link_files}, owned_in(catalog));
}

router checked_router(std::span<const route> routes) {
    auto built = router::build(routes);
    if (!built) throw std::invalid_argument(built.error().message);  // a malformed table: a programming error
    return std::move(built).value();
}

}  // namespace

// What plan_body learned, carried to handle() by the transport: the routed request, or the
// answer that refuses it; and whether the request has been answered.
struct application::dispatch_state {
    route_request request;
    std::optional<transport::outgoing_response> refusal;
    metrics::route label = metrics::route::other;  // of the row the path reached, for /metrics
    // Shared with request.respond, which a handler may keep past this state (a proxied download).
    std::shared_ptr<std::atomic<bool>> answered = std::make_shared<std::atomic<bool>>(false);
};

application::application(catalog::catalog& catalog, storage::blob_store& blobs, app_settings settings,
                         std::span<const route> extra_routes)
    : settings_(std::move(settings)),
      pages_(settings_.pages),
      downloads_(catalog),
      asset_client_(settings_.remote_client),
      upstream_client_(settings_.upstream_client),
      bucket_client_(settings_.bucket_client),
      upstream_pages_(upstream_pages_of(upstream_client_, settings_, catalog)),
      tokens_(catalog),
      // As many rows may wait for their commit as uploads may wait for a worker or be validated;
      // past that the workers wait, their queue fills, and new uploads get 503 at their headers.
      ingester_(catalog, blobs, {.capacity = settings_.write_queue + std::max(1u, settings_.write_workers)}),
      static_(built_in_static_assets()),
      read_workers_(std::max(1u, settings_.read_workers), settings_.read_queue,
                    [](std::string_view what) { spdlog::error("read worker: {}", what); }),
      write_workers_(std::max(1u, settings_.write_workers), settings_.write_queue,
                     [](std::string_view what) { spdlog::error("write worker: {}", what); }),
      outbound_workers_(std::max(1u, settings_.outbound_workers), settings_.outbound_queue,
                        [](std::string_view what) { spdlog::error("outbound worker: {}", what); }),
      issuer_keys_(remote::make_issuer_key_fetcher(settings_.remote_client), settings_.publishing.keys),
      publishers_(catalog, tokens_),
      exchange_(tokens_, publishers_, issuer_keys_, exchange_settings_of(settings_.publishing)),
      remote_files_(asset_client_, blobs, metrics_,
                    {.max_transfers = settings_.proxy_downloads,
                     .private_index = settings_.private_index,
                     .github_token = settings_.github_token}),
      context_{.catalog = catalog,
               .blobs = blobs,
               .pages = pages_,
               .settings = settings_,
               .metrics = metrics_,
               .downloads = downloads_,
               .asset_client = asset_client_,
               .remote_files = remote_files_,
               .tokens = tokens_,
               .ingester = ingester_,
               .static_files = static_,
               .write_workers = write_workers_,
               .read_workers = read_workers_,
               .publishers = publishers_,
               .exchange = exchange_,
               .outbound_workers = outbound_workers_,
               .lookups = file_lookups_,
               .upstream_pages = upstream_pages_.get(),
               .upstream_client = upstream_pages_ ? &upstream_client_ : nullptr,
               .bucket_client =
                   blobs.bucket() != nullptr && settings_.bucket_proxy_downloads ? &bucket_client_ : nullptr},
      routes_(all_routes(extra_routes)),
      router_(checked_router(routes_)) {
    for (const auto& [issuer, keys] : settings_.publishing.pinned_keys) issuer_keys_.pin(issuer, keys);
    catalog.subscribe([this](std::string_view project) {
        pages_.invalidate_project(project);
        file_lookups_.clear();
        if (upstream_pages_) upstream_pages_->forget(project);  // its first file: owned from now on
    });
}

application::~application() { finish_ingests(); }

void application::finish_ingests() {
    remote_files_.stop();
    // The server has drained: no client waits for what the outbound lane still fetches, and a
    // stalled host must not hold the exit (queued work then fails at once).
    asset_client_.stop();
    upstream_client_.stop();
    bucket_client_.stop();
    read_workers_.shutdown(concurrency::worker_pool::shutdown_mode::drain);
    outbound_workers_.shutdown(concurrency::worker_pool::shutdown_mode::drain);
    write_workers_.shutdown(concurrency::worker_pool::shutdown_mode::drain);
    ingester_.finish_commits();  // the drained uploads' rows, committed and answered
}

transport::body_plan application::plan_body(const http::request_header<>& header) {
    auto state = std::make_shared<dispatch_state>();
    try {
        state->refusal = route_of(header, *state);
        if (!state->refusal) return plan_for(header, state);
    } catch (const std::exception& thrown) {
        state->refusal = error_response(header, make_error(error_kind::internal, std::string("routing threw: ") + thrown.what()));
    }
    state->request.planned = nullptr;
    transport::body_plan plan;
    plan.label = state->label;
    if (announces_body(header)) {
        plan.how = transport::body_plan::kind::reject;
        plan.rejection = std::move(state->refusal);
    } else {
        plan.handler_state = std::move(state);  // answered by handle(), and the connection kept
    }
    return plan;
}

namespace {

// The raw path's segments, each one with an escape or a byte no path holds standing as a
// stand-in: a path refused for one segment still names the route it was meant for.
http_target::request_target rough_target(std::string_view raw) {
    http_target::request_target rough;
    std::string_view path = raw.substr(0, raw.find('?'));
    if (path.starts_with('/')) path.remove_prefix(1);
    for (const auto segment : std::views::split(path, '/')) {
        const std::string_view text(segment.begin(), segment.end());
        const bool plain = std::all_of(text.begin(), text.end(), [](char c) {
            return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '-' || c == '_' || c == '.' || c == '~';
        });
        rough.segments.emplace_back(plain && text != "." && text != ".." ? text : "x");
    }
    return rough;
}

}  // namespace

// A refused target is answered in the words of the route it was meant for (JSON for the admin
// API), found from its path as written when the path cannot be decoded.
transport::outgoing_response application::refuse_target(const http::request_header<>& header,
                                                        const error& fault) const {
    const auto raw = header.target();
    auto path = http_target::parse(raw.substr(0, raw.find('?')));
    const auto target = path ? std::move(*path) : rough_target(raw);
    const auto found = router_.match(header.method(), target);
    const route* row = found.found != nullptr ? found.found : found.same_path;
    if (row == nullptr) row = router_.nearest(header.method(), target);
    return row != nullptr ? error_response(header, fault, row->answers) : error_response(header, fault);
}

// The route and the caller's right to it, or the answer that refuses the request.
std::optional<transport::outgoing_response> application::route_of(const http::request_header<>& header,
                                                                   dispatch_state& state) const {
    auto& request = state.request;
    request.planned = &header;  // the session's, for as long as plan_body runs
    if (header.method() == http::verb::unknown) {
        return transport::make_text_response(header, http::status::not_implemented,
                                             "method " + std::string(header.method_string()) + " is not supported");
    }
    auto target = http_target::parse(header.target());
    if (!target) return refuse_target(header, target.error());
    request.target = std::move(*target);
    auto found = router_.match(header.method(), request.target);
    if (found.same_path != nullptr) state.label = (found.found != nullptr ? found.found : found.same_path)->label;
    if (found.found == nullptr) {
        if (found.allowed != 0) return method_not_allowed(header, found.allowed, found.same_path->answers);
        const route* meant = router_.nearest(header.method(), request.target);
        return error_response(header, make_error(error_kind::not_found, std::string(router::where_to_look(request.target))),
                              meant != nullptr ? meant->answers : audience::package_tools);
    }
    request.matched = found.found;
    request.captures = std::move(found.captures);
    if (auto allowed = check_access(tokens_, header, settings_.private_index, request); !allowed)
        return request.refuse(allowed.error());
    return std::nullopt;
}

transport::body_plan application::plan_for(const http::request_header<>& header, std::shared_ptr<dispatch_state> state) {
    const route& matched = *state->request.matched;
    transport::body_plan plan;
    switch (matched.body) {
        case body_kind::none: break;
        case body_kind::json:
            plan.how = transport::body_plan::kind::in_memory;
            plan.limit = json_body_limit;
            break;
        case body_kind::raw_upload:
        case body_kind::form_upload: plan = plan_upload(context_, header, state->request); break;
    }
    if (plan.how == transport::body_plan::kind::reject && !announces_body(header)) {
        state->refusal = std::move(plan.rejection);  // nothing to leave unread: keep the connection
        plan = {};
    }
    // A body bound for a full pool would be read only to be refused: refuse it now.
    if (matched.runs_on != lane::io_thread && announces_body(header) && plan.how != transport::body_plan::kind::reject) {
        const auto& pool = pool_of(matched.runs_on);
        if (pool.queue_depth() >= pool.capacity()) {
            plan = {};  // dropping an upload's sink removes its spool file
            plan.how = transport::body_plan::kind::reject;
            plan.rejection = busy(state->request);
        }
    }
    plan.label = matched.label;
    state->request.planned = nullptr;
    if (plan.how != transport::body_plan::kind::reject) plan.handler_state = std::move(state);
    return plan;
}

void application::handle(transport::incoming_request incoming, transport::responder respond) {
    auto state = std::static_pointer_cast<dispatch_state>(std::move(incoming.handler_state));
    if (!state) {
        return respond(error_response(incoming.header, make_error(error_kind::internal,
                                                                  "the transport handed over a request it did not plan")));
    }
    if (state->refusal) return respond(std::move(*state->refusal));

    auto& request = state->request;
    request.incoming = std::move(incoming);
    request.upload = request.planned_upload.lock();  // the same sink, typed, and from here its one owner
    request.incoming.sink.reset();
    // A write that succeeded records its token as used (for `token list` and the admin page);
    // an upload does so in its own commit (ingest_upload), sparing a synced commit of its own.
    std::string user;
    if (request.grant && request.matched->runs_on == lane::write_pool) user = request.grant->name;
    // The one responder a handler gets: it answers once, even for a handler that kept it and
    // then threw.
    request.respond = [answered = state->answered, respond = std::move(respond), user = std::move(user),
                       tokens = &tokens_](transport::outgoing_response&& response) {
        if (answered->exchange(true)) return;
        if (!user.empty() && response.status < 300) {
            if (auto used = tokens->mark_used(user); !used) spdlog::warn("token '{}': {}", user, used.error().message);
        }
        respond(std::move(response));
    };
    run_on_lane(state);
}

void application::run_on_lane(const std::shared_ptr<dispatch_state>& state) {
    const auto runs_on = state->request.matched->runs_on;
    if (runs_on == lane::io_thread) return run_handler(*state);
    state->request.queued_at = std::chrono::steady_clock::now();
    // An upload on its way to the group commit: a batch that opens meanwhile waits for it.
    std::optional<ingest::commit_queue::arrival> coming;
    if (runs_on == lane::ingest) coming.emplace(ingester_.expect());
    if (!pool_of(runs_on).try_submit(concurrency::job([this, state, coming = std::move(coming)] { run_handler(*state); })))
        state->request.respond(busy(state->request));
}

void application::run_handler(dispatch_state& state) noexcept {
    auto& request = state.request;
    std::string thrown;
    try {
        // The token was checked at the headers; a body and a queue may have taken long since. A
        // revocation or expiry meanwhile stops the handler (the check answers from memory, and
        // sees other processes' commits): a leaked token cannot hold a change open past its revoke.
        if (request.grant && request.matched->runs_on != lane::io_thread) {
            if (auto still = check_access(tokens_, request.header(), settings_.private_index, request); !still) {
                const auto why = still.error().kind == error_kind::unauthorized ? auth::revoked_on_the_way() : still.error();
                request.upload.reset();  // an upload's spool is gone before its refusal is sent
                return request.respond(request.refuse(why));
            }
        }
        if (auto answer = request.matched->handler(context_, request)) {
            request.upload.reset();  // likewise for a handler's refusal
            request.respond(std::move(*answer));
        }
        return;
    } catch (const std::exception& failure) {
        thrown = failure.what();
    } catch (...) {
        thrown = "an exception that is no std::exception";
    }
    try {
        const auto& header = request.header();
        const std::string what = "from " + request.incoming.peer.to_string() + ": the handler threw: " + thrown;
        if (state.answered->load()) {
            spdlog::error("{} {}: {} (after its answer)", header.method_string(), header.target(), what);
            return;
        }
        auto closing = header;  // this connection ends here; the others go on
        closing.set(http::field::connection, "close");
        request.respond(error_response(closing, make_error(error_kind::internal, what), request.matched->answers));
    } catch (...) {
        spdlog::error("a handler threw, and so did its 500");
    }
}

transport::outgoing_response application::busy(const route_request& request) {
    const auto runs_on = request.matched->runs_on;
    if (runs_on == lane::ingest) metrics_.record_ingest(metrics::ingest_outcome::busy);
    return request.busy(runs_on);
}

concurrency::worker_pool& application::pool_of(lane runs_on) noexcept {
    if (runs_on == lane::read_pool) return read_workers_;
    if (runs_on == lane::outbound) return outbound_workers_;
    return write_workers_;
}

void application::watch_external_changes(net::io_context& context) {
    watch_timer_ = std::make_unique<net::steady_timer>(net::make_strand(context));
    poll_external_changes();
}

void application::poll_external_changes() {
    watch_timer_->expires_after(std::chrono::seconds(1));
    watch_timer_->async_wait([this](error_code ec) {
        if (ec) return;
        if (context_.catalog.changed_externally()) {
            pages_.clear();
            file_lookups_.clear();
            if (upstream_pages_) upstream_pages_->forget_all();  // an upload or reservation elsewhere
        }
        poll_external_changes();
    });
}

}  // namespace wheelhouse::app
