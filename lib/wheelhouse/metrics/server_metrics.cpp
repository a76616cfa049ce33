#include "wheelhouse/metrics/server_metrics.hpp"

#include <utility>

namespace wheelhouse::metrics {
namespace {

constexpr std::array<std::string_view, ingest_outcome_count> outcome_names = {
    "created", "identical", "invalid", "conflict", "too_large", "busy", "failed",
};

constexpr double microseconds_per_second = 1e6;

// From a page-cache hit (tens of microseconds) to a slow client's download (seconds).
std::vector<std::uint64_t> latency_bounds() {
    return {50,     100,    250,     500,     1'000,   2'500,     5'000,     10'000,    25'000,
            50'000, 100'000, 250'000, 500'000, 1'000'000, 2'500'000, 5'000'000, 10'000'000};
}

// From a small wheel (milliseconds) to a multi-gigabyte one hashed and unzipped (minutes).
std::vector<std::uint64_t> ingest_bounds() {
    return {1'000,     5'000,     10'000,     25'000,     50'000,     100'000,    250'000,
            500'000,   1'000'000, 2'500'000,  5'000'000,  10'000'000, 30'000'000, 60'000'000, 120'000'000};
}

template <std::size_t... index>
std::array<histogram, sizeof...(index)> latency_histograms(std::index_sequence<index...>) {
    return {{((void)index, histogram(latency_bounds()))...}};
}

std::uint64_t count_of(std::chrono::microseconds elapsed) {
    return elapsed.count() < 0 ? 0 : static_cast<std::uint64_t>(elapsed.count());
}

// A family of one sample without labels: a level, or a count of one thing.
template <class Value>
void one_sample(text_writer& out, std::string_view name, std::string_view help, metric_type type, Value value) {
    out.family(name, help, type);
    out.sample(name, {}, value);
}

// What reading the catalog costs and saves: its size, the page cache, the token checks.
void render_catalog(text_writer& out, const scrape_levels& levels) {
    if (levels.catalog_projects) {
        one_sample(out, "wheelhouse_catalog_projects", "Projects in the catalog.", metric_type::gauge,
                   *levels.catalog_projects);
    }
    if (levels.catalog_files) {
        one_sample(out, "wheelhouse_catalog_files", "Files in the catalog.", metric_type::gauge, *levels.catalog_files);
    }
    one_sample(out, "wheelhouse_page_cache_hits_total", "Simple-API pages answered from memory.", metric_type::counter,
               levels.page_cache_hits);
    one_sample(out, "wheelhouse_page_cache_misses_total", "Simple-API pages rendered from the catalog.",
               metric_type::counter, levels.page_cache_misses);
    one_sample(out, "wheelhouse_page_cache_entries", "Rendered pages held in memory.", metric_type::gauge,
               levels.page_cache_entries);
    one_sample(out, "wheelhouse_page_cache_bytes", "Bytes of rendered pages held in memory.", metric_type::gauge,
               levels.page_cache_bytes);
    one_sample(out, "wheelhouse_page_renders_joined_total",
               "Simple-API page misses answered by a render another request had started.", metric_type::counter,
               levels.page_renders_joined);
    out.family("wheelhouse_token_checks_total", "API tokens checked, from memory or by reading the catalog.",
               metric_type::counter);
    out.sample("wheelhouse_token_checks_total", {{"answered", "memory"}}, levels.token_checks_cached);
    out.sample("wheelhouse_token_checks_total", {{"answered", "catalog"}}, levels.token_checks_read);
}

// Publishers, the exchanges they answered, and the issuers' keys those needed.
void render_trusted_publishing(text_writer& out, const scrape_levels& levels) {
    if (levels.trusted_publishers) {
        one_sample(out, "wheelhouse_trusted_publishers", "Trusted publishers (CI workflows) in the catalog.",
                   metric_type::gauge, *levels.trusted_publishers);
    }
    out.family("wheelhouse_trusted_publisher_changes_total", "Trusted publishers this server added or removed.",
               metric_type::counter);
    out.sample("wheelhouse_trusted_publisher_changes_total", {{"change", "added"}}, levels.publishers_added);
    out.sample("wheelhouse_trusted_publisher_changes_total", {{"change", "removed"}}, levels.publishers_removed);
    out.family("wheelhouse_oidc_token_exchanges_total",
               "CI identity tokens offered at /_/oidc/mint-token, by outcome (minted: an upload token was made).",
               metric_type::counter);
    for (const auto& [outcome, count] : levels.token_exchanges)
        out.sample("wheelhouse_oidc_token_exchanges_total", {{"outcome", outcome}}, count);
    out.family("wheelhouse_oidc_key_fetches_total", "Issuers' signing-key sets fetched, by result.", metric_type::counter);
    out.sample("wheelhouse_oidc_key_fetches_total", {{"result", "fetched"}}, levels.issuer_key_fetches);
    out.sample("wheelhouse_oidc_key_fetches_total", {{"result", "failed"}}, levels.issuer_key_fetch_failures);
}

// Upstream indexes (issue 26): each one's pages by where they came from, its fetches by outcome,
// and what the blob store keeps of them all.
void render_upstreams(text_writer& out, const scrape_levels& levels) {
    if (levels.upstreams.empty()) return;
    out.family("wheelhouse_upstream_page_requests_total",
               "Upstream pages asked for, by upstream and where they were answered from (memory: kept and fresh, or "
               "stale while the upstream fails; network: a fetch, revalidation or read from disk).",
               metric_type::counter);
    for (const auto& each : levels.upstreams) {
        out.sample("wheelhouse_upstream_page_requests_total", {{"upstream", each.name}, {"answered", "memory"}}, each.hits);
        out.sample("wheelhouse_upstream_page_requests_total", {{"upstream", each.name}, {"answered", "network"}},
                   each.misses);
    }
    out.family("wheelhouse_upstream_page_fetches_joined_total",
               "Upstream page misses answered by a fetch another request had started (single flight).",
               metric_type::counter);
    for (const auto& each : levels.upstreams)
        out.sample("wheelhouse_upstream_page_fetches_joined_total", {{"upstream", each.name}}, each.joined);
    out.family("wheelhouse_upstream_fetches_total",
               "Requests for pages made to upstream indexes, by outcome (refused: the page did not parse or was too "
               "large; failed: no answer, or another status).",
               metric_type::counter);
    for (const auto& each : levels.upstreams) {
        const std::pair<std::string_view, std::uint64_t> outcomes[] = {
            {"fetched", each.fetched}, {"not_modified", each.not_modified}, {"not_found", each.not_found},
            {"refused", each.refused}, {"failed", each.failed}};
        for (const auto& [outcome, count] : outcomes)
            out.sample("wheelhouse_upstream_fetches_total", {{"upstream", each.name}, {"outcome", outcome}}, count);
    }
    out.family("wheelhouse_upstream_stale_pages_total", "Upstream pages served past their age, the upstream failing.",
               metric_type::counter);
    for (const auto& each : levels.upstreams)
        out.sample("wheelhouse_upstream_stale_pages_total", {{"upstream", each.name}}, each.stale);
    one_sample(out, "wheelhouse_upstream_pages_kept", "Upstream pages held in memory.", metric_type::gauge,
               levels.upstream_pages_kept);
    one_sample(out, "wheelhouse_upstream_page_bytes", "Bytes of upstream pages held in memory, both formats.",
               metric_type::gauge, levels.upstream_page_bytes);
    if (levels.upstream_files_kept) {
        one_sample(out, "wheelhouse_upstream_files_kept", "Upstream files kept in the blob store, checked.",
                   metric_type::gauge, *levels.upstream_files_kept);
        one_sample(out, "wheelhouse_upstream_file_bytes", "Bytes of the upstream files kept.", metric_type::gauge,
                   *levels.upstream_file_bytes);
        one_sample(out, "wheelhouse_upstream_metadata_kept", "Upstream files' core metadata (.metadata) kept.",
                   metric_type::gauge, *levels.upstream_metadata_kept);
    }
}

}  // namespace

std::string_view to_string(ingest_outcome outcome) noexcept { return outcome_names[static_cast<std::size_t>(outcome)]; }

server_metrics::server_metrics()
    : started_(std::chrono::system_clock::now()),
      latency_(latency_histograms(std::make_index_sequence<route_count>())),
      ingest_duration_(ingest_bounds()),
      store_latency_(latency_histograms(std::make_index_sequence<store_operation_count>())) {}

std::size_t server_metrics::status_slot(unsigned status) noexcept {
    return status >= lowest_status && status < lowest_status + status_slots ? status - lowest_status : status_slots;
}

void server_metrics::record_request(route label, unsigned status, std::uint64_t body_bytes,
                                    std::chrono::microseconds elapsed) noexcept {
    const auto which = static_cast<std::size_t>(label);
    requests_[which][status_slot(status)].add();
    response_bytes_[which].add(body_bytes);
    latency_[which].observe(count_of(elapsed));
}

void server_metrics::record_ingest(ingest_outcome outcome, std::chrono::microseconds elapsed) noexcept {
    ingests_[static_cast<std::size_t>(outcome)].add();
    ingest_duration_.observe(count_of(elapsed));
}

std::uint64_t server_metrics::requests(route which, unsigned status) const noexcept {
    return requests_[static_cast<std::size_t>(which)][status_slot(status)].value();
}

std::uint64_t server_metrics::ingests(ingest_outcome outcome) const noexcept {
    return ingests_[static_cast<std::size_t>(outcome)].value();
}

std::string server_metrics::render(const scrape_levels& levels) const {
    text_writer out;
    render_requests(out);
    render_ingests(out, levels);
    render_catalog(out, levels);
    render_trusted_publishing(out, levels);
    render_upstreams(out, levels);
    render_faults(out);
    render_store(out);
    one_sample(out, "process_start_time_seconds", "Start time of the process since the Unix epoch.", metric_type::gauge,
               static_cast<double>(std::chrono::duration_cast<std::chrono::seconds>(started_.time_since_epoch()).count()));
    return out.take();
}

void server_metrics::render_requests(text_writer& out) const {
    out.family("wheelhouse_http_requests_total", "HTTP requests answered, by route and status code.",
               metric_type::counter);
    for (std::size_t r = 0; r < route_count; ++r) {
        const auto route_name = to_string(static_cast<route>(r));
        for (unsigned slot = 0; slot <= status_slots; ++slot) {
            const auto count = requests_[r][slot].value();
            if (count == 0) continue;  // a status never answered is no series, as client libraries do
            const auto status = slot < status_slots ? std::to_string(lowest_status + slot) : std::string("other");
            out.sample("wheelhouse_http_requests_total", {{"route", route_name}, {"status", status}}, count);
        }
    }

    out.family("wheelhouse_http_request_duration_seconds",
               "Time from a request's headers to the last byte of its response, by route.", metric_type::histogram);
    for (std::size_t r = 0; r < route_count; ++r)
        latency_[r].render(out, "wheelhouse_http_request_duration_seconds", {{"route", to_string(static_cast<route>(r))}},
                           microseconds_per_second);

    out.family("wheelhouse_http_response_bytes_total", "Response body bytes sent, by route.", metric_type::counter);
    for (std::size_t r = 0; r < route_count; ++r)
        out.sample("wheelhouse_http_response_bytes_total", {{"route", to_string(static_cast<route>(r))}},
                   response_bytes_[r].value());
}

void server_metrics::render_ingests(text_writer& out, const scrape_levels& levels) const {
    out.family("wheelhouse_ingests_total", "Authorised uploads offered to the ingest workers, by outcome (busy: the queue was full).", metric_type::counter);
    for (std::size_t o = 0; o < ingest_outcome_count; ++o)
        out.sample("wheelhouse_ingests_total", {{"outcome", outcome_names[o]}}, ingests_[o].value());

    out.family("wheelhouse_ingest_duration_seconds",
               "Time from an upload's last byte to its answer: queueing, validation, hashing, catalog write.",
               metric_type::histogram);
    ingest_duration_.render(out, "wheelhouse_ingest_duration_seconds", {}, microseconds_per_second);

    one_sample(out, "wheelhouse_ingest_queue_depth", "Uploads waiting for an ingest worker.", metric_type::gauge,
               levels.ingest_queue_depth);
    one_sample(out, "wheelhouse_ingest_queue_capacity", "Uploads the ingest queue holds before answering 503.",
               metric_type::gauge, levels.ingest_queue_capacity);
}

// What went wrong beside the requests themselves: upstream hosts and the access log.
void server_metrics::render_faults(text_writer& out) const {
    one_sample(out, "wheelhouse_proxy_upstream_errors_total",
               "Remote-asset hosts that failed or sent wrong bytes while a file was streamed through (proxy mode).",
               metric_type::counter, proxy_upstream_errors_.value());
    one_sample(out, "wheelhouse_access_log_lines_lost_total",
               "Access-log lines that could not be written (the disk was full, the pipe closed); the error log says when.",
               metric_type::counter, access_log_lines_lost_.value());
    one_sample(out, "wheelhouse_access_log_waits_total",
               "Times a request waited for the access log's writer, which was a full queue behind its destination.",
               metric_type::counter, access_log_waits_.value());
}

void server_metrics::record_store(store_operation operation, bool failed, std::chrono::microseconds elapsed) noexcept {
    const auto which = static_cast<std::size_t>(operation);
    store_latency_[which].observe(count_of(elapsed));
    if (failed) store_errors_[which].add();
}

void server_metrics::render_store(text_writer& out) const {
    static constexpr std::array<std::string_view, store_operation_count> names{"put", "look_up", "get", "remove"};
    out.family("wheelhouse_object_store_duration_seconds",
               "Time the object store holding the index's files took to answer, by operation (none: files on disk).",
               metric_type::histogram);
    for (std::size_t o = 0; o < store_operation_count; ++o)
        store_latency_[o].render(out, "wheelhouse_object_store_duration_seconds", {{"operation", names[o]}},
                                 microseconds_per_second);
    out.family("wheelhouse_object_store_errors_total",
               "Requests to the object store that failed: no answer in time, refused, or not a 2xx.", metric_type::counter);
    for (std::size_t o = 0; o < store_operation_count; ++o)
        out.sample("wheelhouse_object_store_errors_total", {{"operation", names[o]}}, store_errors_[o].value());
}

}  // namespace wheelhouse::metrics
