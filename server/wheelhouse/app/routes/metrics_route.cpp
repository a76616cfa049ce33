#include "wheelhouse/app/routes/metrics_route.hpp"

#include <spdlog/spdlog.h>

#include "wheelhouse/auth/token_store.hpp"
#include "wheelhouse/catalog/catalog.hpp"
#include "wheelhouse/oidc/exchange.hpp"
#include "wheelhouse/oidc/publisher_store.hpp"
#include "wheelhouse/catalog/upstream_rows.hpp"
#include "wheelhouse/transport/responses.hpp"

namespace wheelhouse::app {

transport::outgoing_response serve_metrics(route_context& context, const http::request_header<>& request,
                                           const concurrency::worker_pool& write_workers) {
    metrics::scrape_levels levels;
    levels.ingest_queue_depth = write_workers.queue_depth();
    levels.ingest_queue_capacity = write_workers.capacity();
    if (auto projects = context.catalog.list_projects()) {
        std::uint64_t files = 0;
        for (const auto& listing : *projects) files += static_cast<std::uint64_t>(listing.file_count);
        levels.catalog_projects = projects->size();
        levels.catalog_files = files;
    } else {
        // The page still answers: a locked or broken catalog is what an operator most needs to see.
        spdlog::warn("metrics: catalog size unavailable: {}", projects.error().message);
    }
    const auto pages = context.pages.stats();
    levels.page_cache_hits = pages.hits;
    levels.page_cache_misses = pages.misses;
    levels.page_cache_entries = pages.entries;
    levels.page_cache_bytes = pages.bytes;
    levels.page_renders_joined = pages.renders_joined;
    if (context.upstream_pages != nullptr) {
        const auto upstreams = context.upstream_pages->stats();
        for (const auto& each : upstreams.upstreams) {
            levels.upstreams.push_back({each.upstream, each.hits, each.misses, each.joined, each.fetched,
                                        each.not_modified, each.not_found, each.refused, each.failed, each.stale});
        }
        levels.upstream_pages_kept = upstreams.pages;
        levels.upstream_page_bytes = upstreams.bytes;
        if (auto kept = catalog::count_kept_files(context.catalog)) {
            levels.upstream_files_kept = kept->files;
            levels.upstream_file_bytes = kept->bytes;
            levels.upstream_metadata_kept = kept->metadata_files;
        }
    }
    const auto checks = context.tokens.cache_stats();
    levels.token_checks_cached = checks.hits;
    levels.token_checks_read = checks.lookups;

    if (auto publishers = context.publishers.count()) levels.trusted_publishers = static_cast<std::uint64_t>(*publishers);
    const auto changes = context.publishers.stats();
    levels.publishers_added = changes.added;
    levels.publishers_removed = changes.removed;
    for (std::size_t i = 0; i < oidc::exchange_outcome_count; ++i) {
        const auto outcome = static_cast<oidc::exchange_outcome>(i);
        levels.token_exchanges.emplace_back(oidc::to_string(outcome), context.exchange.count(outcome));
    }
    const auto fetches = context.exchange.key_fetches();
    levels.issuer_key_fetches = fetches.fetched;
    levels.issuer_key_fetch_failures = fetches.failed;

    http::fields headers;
    headers.set(http::field::cache_control, "no-store");
    return transport::make_shared_response(request, http::status::ok, metrics::text_content_type,
                                           std::make_shared<const std::string>(context.metrics.render(levels)),
                                           std::move(headers));
}

route_answer metrics_page(route_context& context, route_request& request) {
    return serve_metrics(context, request.header(), context.write_workers);
}

}  // namespace wheelhouse::app
