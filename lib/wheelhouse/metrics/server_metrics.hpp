#pragma once
// What a wheelhouse server counts, and the /metrics page that shows it.
//
// Counts on the request path (requests, latency, bytes, ingests, upstream errors) are relaxed
// atomics in fixed arrays: recording one is a handful of uncontended additions, with no lock
// and no allocation. Levels that already live elsewhere (queue depth, catalog size, page-cache
// statistics) are read only when scraped and handed to render().

#include <array>
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "wheelhouse/metrics/histogram.hpp"
#include "wheelhouse/metrics/route.hpp"

namespace wheelhouse::metrics {

// How an upload that reached the ingest stage ended.
enum class ingest_outcome : std::size_t {
    created,    // 201
    identical,  // 200: the same bytes were already there
    invalid,    // 400: not a wheel, breaks a rule, digests do not match
    conflict,   // 409: the filename is taken by other bytes
    too_large,  // 413
    busy,       // 503: the ingest queue was full, or the database stayed locked
    failed,     // 500 and anything else: our own fault
};
inline constexpr std::size_t ingest_outcome_count = static_cast<std::size_t>(ingest_outcome::failed) + 1;
std::string_view to_string(ingest_outcome outcome) noexcept;

// One upstream index's page store, as its counters stood at the scrape (issue 26).
// What the server asks of the object store holding its files (issue 29), one series each.
enum class store_operation : std::size_t { put, look_up, get, remove, count_ };
inline constexpr std::size_t store_operation_count = static_cast<std::size_t>(store_operation::count_);

struct upstream_levels {
    std::string name;
    std::uint64_t hits = 0;          // pages answered from memory
    std::uint64_t misses = 0;        // pages that needed the outbound lane
    std::uint64_t joined = 0;        // misses that waited for another's fetch
    std::uint64_t fetched = 0;       // the upstream's 200
    std::uint64_t not_modified = 0;  // 304
    std::uint64_t not_found = 0;     // 404
    std::uint64_t refused = 0;       // pages that did not parse or were too large
    std::uint64_t failed = 0;        // no answer, or another status
    std::uint64_t stale = 0;         // pages served past their age
};

// Levels read at scrape time from the components that own them.
struct scrape_levels {
    std::uint64_t ingest_queue_depth = 0;
    std::uint64_t ingest_queue_capacity = 0;
    std::optional<std::uint64_t> catalog_projects;  // absent when the catalog could not be read
    std::optional<std::uint64_t> catalog_files;
    std::uint64_t page_cache_hits = 0;
    std::uint64_t page_cache_misses = 0;
    std::uint64_t page_cache_entries = 0;
    std::uint64_t page_cache_bytes = 0;
    std::uint64_t page_renders_joined = 0;   // misses that waited for a render already under way
    std::uint64_t token_checks_cached = 0;   // credentials checked from memory
    std::uint64_t token_checks_read = 0;     // credentials checked by reading the catalog
    // Trusted publishing: the publishers in the catalog (absent when it could not be read), the
    // identity tokens exchanged by outcome name, the issuers' key sets fetched, and the
    // publishers this server added and removed.
    std::optional<std::uint64_t> trusted_publishers;
    std::vector<std::pair<std::string_view, std::uint64_t>> token_exchanges;
    std::uint64_t issuer_key_fetches = 0;
    std::uint64_t issuer_key_fetch_failures = 0;
    std::uint64_t publishers_added = 0;
    std::uint64_t publishers_removed = 0;
    std::vector<upstream_levels> upstreams;  // empty: no upstream configured
    std::uint64_t upstream_pages_kept = 0;   // in memory
    std::uint64_t upstream_page_bytes = 0;
    std::optional<std::uint64_t> upstream_files_kept;  // in the blob store; absent when the catalog could not be read
    std::optional<std::uint64_t> upstream_file_bytes;
    std::optional<std::uint64_t> upstream_metadata_kept;
};

// Thread safety: record_* and render() may be called from any thread at any time.
class server_metrics {
public:
    server_metrics();

    // One finished request (any response, including refusals the transport wrote itself), under
    // the label of the route it reached.
    void record_request(route which, unsigned status, std::uint64_t body_bytes,
                        std::chrono::microseconds elapsed) noexcept;
    // One upload the ingest workers finished; `elapsed` from queueing to the answer.
    void record_ingest(ingest_outcome outcome, std::chrono::microseconds elapsed) noexcept;
    // One upload refused before any worker saw it (busy: the queue was full); no duration.
    void record_ingest(ingest_outcome outcome) noexcept { ingests_[static_cast<std::size_t>(outcome)].add(); }
    // A remote asset's host failed or lied while the server streamed it (proxy mode).
    void record_proxy_upstream_error() noexcept { proxy_upstream_errors_.add(); }
    // One request to the object store, answered or not (`failed`: no answer, or not a 2xx).
    void record_store(store_operation operation, bool failed, std::chrono::microseconds elapsed) noexcept;
    // Access-log lines whose write failed (a full disk, a closed pipe).
    void record_access_log_lost(std::uint64_t lines) noexcept { access_log_lines_lost_.add(lines); }
    // A request's thread waited for the access log's writer, which was a full queue behind.
    void record_access_log_wait() noexcept { access_log_waits_.add(); }

    std::uint64_t requests(route which, unsigned status) const noexcept;
    std::uint64_t ingests(ingest_outcome outcome) const noexcept;
    std::uint64_t proxy_upstream_errors() const noexcept { return proxy_upstream_errors_.value(); }
    std::uint64_t store_errors(store_operation operation) const noexcept {
        return store_errors_[static_cast<std::size_t>(operation)].value();
    }
    std::uint64_t access_log_lines_lost() const noexcept { return access_log_lines_lost_.value(); }
    std::uint64_t access_log_waits() const noexcept { return access_log_waits_.value(); }

    // The whole exposition page.
    std::string render(const scrape_levels& levels) const;

private:
    static constexpr unsigned lowest_status = 100;
    static constexpr unsigned status_slots = 500;  // 100..599, then one slot for any other code
    static std::size_t status_slot(unsigned status) noexcept;
    // The page's parts, in its order.
    void render_requests(text_writer& out) const;
    void render_ingests(text_writer& out, const scrape_levels& levels) const;
    void render_faults(text_writer& out) const;
    void render_store(text_writer& out) const;

    std::chrono::system_clock::time_point started_;
    std::array<std::array<counter, status_slots + 1>, route_count> requests_;
    std::array<counter, route_count> response_bytes_;
    std::array<histogram, route_count> latency_;
    std::array<counter, ingest_outcome_count> ingests_;
    histogram ingest_duration_;
    std::array<histogram, store_operation_count> store_latency_;
    std::array<counter, store_operation_count> store_errors_;
    counter proxy_upstream_errors_;
    counter access_log_lines_lost_;
    counter access_log_waits_;
};

}  // namespace wheelhouse::metrics
