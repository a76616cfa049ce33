#pragma once
// Upstream project pages as this index keeps them (issue 26). A page is fetched on the network
// lane, once however many requests miss it meanwhile (single flight); read strictly
// (upstream/project_page.hpp) and rendered in both formats once; kept in memory and under
// DATA/upstream/<upstream>/<project>.{meta,body}, fresh for max_age, then revalidated with
// If-None-Match. When the upstream fails, a kept page is served past its age (stale) and the
// upstream is asked again only after retry_after_failure; a page that does not parse is never
// kept. An upstream's 404 is kept as long as a page.
//
// Never a page of an owned name: each flight asks `is_owned` right before it fetches, and
// forget() drops a name the moment it becomes owned (its first upload), so a flight that began
// before cannot keep its page afterwards.
//
// Thread safety: every member may be called from any thread. find() never blocks on the
// network (the I/O thread's path); request() hands the work to the outbound lane; get_now()
// blocks its caller (the outbound lane only).

#include <atomic>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "wheelhouse/storage/page_file.hpp"
#include "wheelhouse/concurrency/worker_pool.hpp"
#include "wheelhouse/remote/host_policy.hpp"
#include "wheelhouse/remote/http_client.hpp"
#include "wheelhouse/render/upstream_pages.hpp"
#include "wheelhouse/result.hpp"
#include "wheelhouse/upstream/project_page.hpp"
#include "wheelhouse/upstream/routing.hpp"

namespace wheelhouse::upstream {

// One format of a kept page as served: the body and this index's strong ETag of it.
struct rendered_body {
    std::shared_ptr<const std::string> body;
    std::string etag;
    std::shared_ptr<storage::descriptor> file{};  // a large body's read-only copy, sent by sendfile (or null)
    // Memory held, the copy's included.
    std::size_t held_bytes() const noexcept { return body ? body->size() * (file ? 2 : 1) : 0; }
};

struct kept_page {
    std::string upstream;                      // its name
    std::string url;                           // the page's URL at the upstream
    std::shared_ptr<const project_page> page;  // null: the upstream has no such project (its 404)
    rendered_body html;
    rendered_body json;
    std::string validator;                          // the upstream's ETag, for If-None-Match
    std::chrono::system_clock::time_point fetched;  // when the upstream last confirmed it (200 or 304)
    std::string content_type;                       // the upstream's, for the copy on disk
};

// What a request for a page gets.
struct page_outcome {
    enum class kind { page, owned, failed };
    kind what = kind::failed;
    std::shared_ptr<const kept_page> kept;  // kind::page
    // kind::failed: why there is no page (error_kind::upstream or timeout, naming the upstream);
    // kind::page: set when the page is served past its age, saying why it was not renewed.
    std::optional<error> failure;
    bool stale() const noexcept { return what == kind::page && failure.has_value(); }
};

struct store_options {
    std::chrono::seconds max_age{600};               // a page is fresh this long after the upstream confirmed it
    std::chrono::seconds retry_after_failure{10};    // a failed upstream is asked again after this
    std::uint64_t max_page_bytes = 64ull << 20;      // a longer page is refused (502)
    std::size_t max_memory_bytes = 256u << 20;       // rendered pages kept in memory; past it the least used go
    bool offline = false;                            // fetch nothing: serve what is kept
    std::filesystem::path directory;                 // DATA/upstream; empty: memory only
    std::filesystem::path file_folder{};             // where a large page's read-only copy is (storage/page_file.hpp)
    // Where listed files may be: the upstreams' hosts and --upstream-file-hosts; a file elsewhere
    // is left out of the page. None: every file the parser keeps.
    std::optional<remote::host_policy> file_hosts;
};

class page_store {
public:
    // True when `project` is owned (has files here or is reserved); an error when that cannot be told.
    using ownership_check = std::function<result<bool>(std::string_view project)>;
    using page_waiter = std::function<void(const page_outcome& outcome)>;

    page_store(remote::http_client& client, const routing& routes, store_options options,
               render::upstream_links links, ownership_check is_owned);
    ~page_store();  // defined where entry and counters are complete
    page_store(const page_store&) = delete;
    page_store& operator=(const page_store&) = delete;

    // A page that needs no fetch: fresh, or stale while its upstream is failing (or the index
    // is offline). Counts a hit. Never blocks on the network.
    std::optional<page_outcome> find(const upstream_index& upstream, std::string_view project) const;

    // Single flight: the first caller for a page queues one job on `lane` that checks ownership,
    // then fetches, revalidates or reads the page from disk; callers that miss it meanwhile wait
    // for that job. Each waiter is called once, on the lane's thread. False, without calling
    // `waiter`, when the lane's queue had no room (answer 503).
    bool request(const upstream_index& upstream, std::string_view project, page_waiter waiter,
                 concurrency::worker_pool& lane);

    // The same, on the calling thread, without joining a flight: for callers already on the lane.
    page_outcome get_now(const upstream_index& upstream, std::string_view project);

    // `project` became owned (this process committed its first file): its pages go, from every
    // upstream, and no flight begun before may keep one.
    void forget(std::string_view project);
    // Another process changed the catalog (an upload, a reservation): every page goes.
    void forget_all();

    struct upstream_statistics {
        std::string upstream;
        std::uint64_t hits = 0;          // answered from memory
        std::uint64_t misses = 0;        // needed the outbound lane
        std::uint64_t joined = 0;        // misses that waited for another's flight
        std::uint64_t fetched = 0;       // 200
        std::uint64_t not_modified = 0;  // 304
        std::uint64_t not_found = 0;     // 404 or 410
        std::uint64_t refused = 0;       // a page that did not parse, or was too large
        std::uint64_t failed = 0;        // no answer, or another status
        std::uint64_t stale = 0;         // pages served past their age
    };
    struct statistics {
        std::vector<upstream_statistics> upstreams;
        std::size_t pages = 0;  // kept in memory
        std::size_t bytes = 0;
    };
    statistics stats() const;

private:
    struct entry;
    struct flight;
    struct counters;

    page_outcome resolve(const upstream_index& upstream, const std::string& project);
    page_outcome fetch(const upstream_index& upstream, const std::string& project,
                       std::shared_ptr<const kept_page> before, std::uint64_t started);
    page_outcome stale_or_failed(const upstream_index& upstream, const std::string& project,
                                 std::shared_ptr<const kept_page> before, error failure, std::uint64_t started);
    result<std::shared_ptr<const kept_page>> make_page(const upstream_index& upstream, const std::string& project,
                                                       std::string_view body, std::string content_type,
                                                       std::string validator,
                                                       std::chrono::system_clock::time_point fetched) const;
    std::shared_ptr<const kept_page> load_from_disk(const upstream_index& upstream, const std::string& project) const;
    void save_to_disk(const kept_page& kept, std::string_view body) const;
    void land(const std::string& key, const std::shared_ptr<const kept_page>& kept, std::uint64_t started,
              const std::optional<error>& failure);
    bool fresh(const kept_page& kept) const;
    counters& counts_of(std::string_view upstream) const;
    std::uint64_t generation() const;

    remote::http_client& client_;
    const routing& routes_;
    const store_options options_;
    const render::upstream_links links_;
    const ownership_check is_owned_;

    mutable std::mutex mutex_;  // guards every member below
    std::unordered_map<std::string, entry> entries_;   // by key: "<upstream>\n<project>"
    std::unordered_map<std::string, std::shared_ptr<flight>> flights_;
    std::uint64_t generation_ = 0;  // counts forgets
    std::uint64_t cleared_at_ = 0;  // the generation of the last forget_all
    std::unordered_map<std::string, std::uint64_t> forgotten_at_;  // by project
    std::size_t bytes_ = 0;
    mutable std::atomic<std::uint64_t> clock_{0};  // stamps entries' use, for eviction
    std::vector<std::unique_ptr<counters>> counters_;  // one per upstream, in routing order
};

}  // namespace wheelhouse::upstream
