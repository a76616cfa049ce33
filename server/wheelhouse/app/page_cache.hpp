#pragma once
// Rendered simple-API pages kept in memory, so a page hit does no SQL and no rendering.
// Entries are dropped when the catalog changes the project they show.
//
// Pages live in scopes: "" for /simple/, one per canonical selector for /variants/<s>/simple/,
// and one per set of project patterns for the project list a project-limited token sees.
// Anyone can name a new valid selector, so these other scopes kept are capped in number and in
// bytes: past either cap the scope least recently used is dropped whole (and a page that alone
// would break the byte cap is served but not kept). /simple/ is never dropped.
//
// A miss renders off the I/O thread, once per page however many ask for it (render_once).

#include <array>
#include <atomic>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "wheelhouse/concurrency/worker_pool.hpp"
#include "wheelhouse/pep691/negotiation.hpp"
#include "wheelhouse/result.hpp"
#include "wheelhouse/storage/page_file.hpp"

namespace wheelhouse::app {

struct rendered_page {
    std::shared_ptr<const std::string> body;
    std::string etag;  // quoted, strong: http_conditional::strong_entity_tag
    std::shared_ptr<storage::descriptor> body_file{};  // a large body's read-only copy, sent by sendfile (or null)
    // When it was rendered (Unix milliseconds; 0: never stamped, no Last-Modified), and that
    // instant's second and the next as HTTP-dates, written once (page_response.cpp says which
    // one a response carries).
    std::int64_t rendered_ms = 0;
    std::array<char, 29> rendered_second{};
    std::array<char, 29> next_second{};

    // Stamps the page as rendered now.
    void stamp_now();
    // Memory held, the copy's included.
    std::size_t held_bytes() const noexcept { return body ? body->size() * (body_file ? 2 : 1) : 0; }
};

struct page_key {
    std::string scope;    // "" for /simple/, a canonical variant selector, or a limited token's list
    std::string project;  // "" for the project list
    pep691::page_format format = pep691::page_format::html;
};

// Thread safety: every member may be called from any thread.
class page_cache {
public:
    struct options {
        std::size_t max_variant_scopes = 64;
        std::size_t max_variant_bytes = 256u << 20;  // pages of every variant scope together
        std::filesystem::path file_folder{};  // where a large page's read-only copy is (storage/page_file.hpp)
    };
    page_cache() : page_cache(options{}) {}
    explicit page_cache(const options& settings);
    ~page_cache();

    // Returns the cached page, or renders it with `render` (which may find nothing, e.g. for
    // an unknown project, or fail: nothing is cached then) and keeps it, unless the catalog
    // changed while it rendered, so a stale page is never stored.
    using renderer = std::function<result<std::optional<std::string>>()>;
    result<std::optional<rendered_page>> get_or_render(const page_key& key, const renderer& render);

    // The cached page, counted as a hit; null on a miss (not counted: the render counts it).
    // Shared, not copied: a hit takes a reference, never an allocation.
    std::shared_ptr<const rendered_page> find(const page_key& key) const;

    // Single flight for a miss: the first caller for `key` queues one job on `pool` that renders
    // the page as get_or_render does; callers that miss the same page meanwhile wait for that
    // render instead of starting their own. Each `waiter` is then called once, on the pool's
    // thread, with the page. A page the catalog changed since its render began is no page to
    // wait for: later callers start a render of their own. Returns false, and never calls
    // `waiter`, when the pool's queue had no room (answer 503). The page may have been cached
    // since the caller's miss: then `waiter` is called at once, on the calling thread.
    using page_result = result<std::optional<rendered_page>>;
    using page_waiter = std::function<void(const page_result& page)>;
    bool render_once(const page_key& key, renderer render, page_waiter waiter, concurrency::worker_pool& pool);

    // A project's pages in every scope, and every project list (whose contents may have changed
    // with it).
    void invalidate_project(std::string_view project);
    void clear();

    struct statistics {
        std::uint64_t hits = 0;
        std::uint64_t misses = 0;
        std::size_t entries = 0;
        std::size_t bytes = 0;
        std::size_t variant_scopes = 0;           // kept now
        std::uint64_t variant_scopes_dropped = 0;  // to stay within the cap, since start
        std::uint64_t renders_started = 0;         // by render_once: one per flight
        std::uint64_t renders_joined = 0;          // misses that waited for another's render
    };
    statistics stats() const;

private:
    struct scope_pages;
    struct flight;
    static std::string flight_name(const page_key& key);
    void land(const page_key& key, const std::shared_ptr<flight>& rendering, const renderer& render);
    static std::string page_name(pep691::page_format format, std::string_view project);
    bool drop_least_recent_variant_scope(const scope_pages* keep);
    void erase_page(scope_pages& scope, const std::string& name);
    std::size_t variant_bytes() const;

    const options options_;
    mutable std::shared_mutex mutex_;
    std::unordered_map<std::string, std::unique_ptr<scope_pages>> scopes_;
    std::uint64_t generation_ = 0;
    std::size_t entries_ = 0;
    std::size_t bytes_ = 0;
    std::uint64_t scopes_dropped_ = 0;
    // Stamps each variant scope's use; a hit only bumps it, under the shared lock.
    mutable std::atomic<std::uint64_t> clock_{0};
    mutable std::atomic<std::uint64_t> hits_{0};
    mutable std::atomic<std::uint64_t> misses_{0};
    // Renders under way, by flight_name(); taken before mutex_ when both are held.
    std::mutex flights_mutex_;
    std::unordered_map<std::string, std::shared_ptr<flight>> flights_;
    std::atomic<std::uint64_t> renders_started_{0};
    std::atomic<std::uint64_t> renders_joined_{0};
};

}  // namespace wheelhouse::app
