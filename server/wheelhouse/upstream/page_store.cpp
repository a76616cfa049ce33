#include "wheelhouse/upstream/page_store.hpp"

#include <fstream>
#include <iterator>
#include <sstream>
#include <thread>

#include <boost/json.hpp>
#include <spdlog/spdlog.h>

#include "wheelhouse/concurrency/single_flight.hpp"
#include "wheelhouse/error_text.hpp"
#include "wheelhouse/http/conditional.hpp"

namespace wheelhouse::upstream {
namespace {

namespace json = boost::json;
using clock = std::chrono::system_clock;

constexpr std::string_view page_accept =
    "application/vnd.pypi.simple.v1+json, application/vnd.pypi.simple.v1+html;q=0.2, text/html;q=0.01";

std::string key_of(std::string_view upstream, std::string_view project) {
    return std::string(upstream) + "\n" + std::string(project);
}

rendered_body rendered(std::string body, const std::filesystem::path& folder) {
    body.shrink_to_fit();
    rendered_body out;
    out.etag = http_conditional::strong_entity_tag(body);
    if (body.size() >= storage::page_file_threshold) out.file = storage::page_file(body, folder);
    out.body = std::make_shared<const std::string>(std::move(body));
    return out;
}

std::int64_t unix_ms(clock::time_point when) {
    return std::chrono::duration_cast<std::chrono::milliseconds>(when.time_since_epoch()).count();
}

// The reason a 502 or 504 gives for an upstream's failure: which upstream, which page, then why.
error upstream_failure(const upstream_index& upstream, std::string_view project, const error& cause) {
    const auto kind = cause.kind == error_kind::timeout ? error_kind::timeout : error_kind::upstream;
    return make_error(kind,
                      "the upstream index " + upstream.name + " failed to answer for " + std::string(project) +
                          ", and this index has no copy of that page; retry later",
                      describe(cause));
}

// Files whose URL the host policy refuses (another host than the upstreams' and
// --upstream-file-hosts, plain http) are left out of the page, and counted as the parser counts
// its own: a page never lists a file this index would not fetch.
void leave_out_foreign_files(project_page& page, const remote::host_policy& hosts) {
    std::erase_if(page.files, [&](const upstream_file& file) {
        auto allowed = hosts.check_url(file.url);
        if (allowed) return false;
        if (page.left_out++ == 0) page.first_left_out = file.filename + ": " + allowed.error().message;
        return true;
    });
}

}  // namespace

struct page_store::entry {
    std::shared_ptr<const kept_page> kept;
    std::optional<error> failure;          // the last failure to renew it
    clock::time_point failed_at;
    mutable std::atomic<std::uint64_t> last_used{0};
    std::size_t bytes = 0;

    entry() = default;
    entry(entry&& other) noexcept
        : kept(std::move(other.kept)), failure(std::move(other.failure)), failed_at(other.failed_at),
          last_used(other.last_used.load()), bytes(other.bytes) {}
};

struct page_store::flight {
    std::vector<page_waiter> waiters;
};

struct page_store::counters {
    std::string upstream;
    std::atomic<std::uint64_t> hits{0}, misses{0}, joined{0}, fetched{0}, not_modified{0}, not_found{0}, refused{0},
        failed{0}, stale{0};
};

page_store::page_store(remote::http_client& client, const routing& routes, store_options options,
                       render::upstream_links links, ownership_check is_owned)
    : client_(client), routes_(routes), options_(std::move(options)), links_(std::move(links)),
      is_owned_(std::move(is_owned)) {
    for (const auto& upstream : routes_.upstreams()) {
        counters_.push_back(std::make_unique<counters>());
        counters_.back()->upstream = upstream.name;
    }
}

page_store::~page_store() = default;

page_store::counters& page_store::counts_of(std::string_view upstream) const {
    for (const auto& each : counters_) {
        if (each->upstream == upstream) return *each;
    }
    return *counters_.front();  // every upstream the store is asked about is one of routes_'s
}

bool page_store::fresh(const kept_page& kept) const { return clock::now() < kept.fetched + options_.max_age; }

std::uint64_t page_store::generation() const {
    std::lock_guard lock(mutex_);
    return generation_;
}

std::optional<page_outcome> page_store::find(const upstream_index& upstream, std::string_view project) const {
    std::lock_guard lock(mutex_);
    const auto found = entries_.find(key_of(upstream.name, project));
    if (found == entries_.end()) return std::nullopt;
    const auto& kept = *found->second.kept;
    page_outcome outcome{page_outcome::kind::page, found->second.kept, std::nullopt};
    if (!fresh(kept)) {
        // Past its age: served as it is only while its upstream fails (or nothing is fetched).
        if (options_.offline) {
            outcome.failure = make_error(error_kind::timeout, "this index runs --offline");
        } else if (!found->second.failure || clock::now() >= found->second.failed_at + options_.retry_after_failure) {
            return std::nullopt;
        } else {
            outcome.failure = found->second.failure;
        }
        counts_of(upstream.name).stale.fetch_add(1, std::memory_order_relaxed);
    }
    found->second.last_used.store(clock_.fetch_add(1, std::memory_order_relaxed) + 1, std::memory_order_relaxed);
    counts_of(upstream.name).hits.fetch_add(1, std::memory_order_relaxed);
    return outcome;
}

bool page_store::request(const upstream_index& upstream, std::string_view project, page_waiter waiter,
                         concurrency::worker_pool& lane) {
    const auto key = key_of(upstream.name, project);
    auto& counts = counts_of(upstream.name);
    std::lock_guard lock(mutex_);
    counts.misses.fetch_add(1, std::memory_order_relaxed);
    if (auto joined = flights_.find(key); joined != flights_.end()) {
        joined->second->waiters.push_back(std::move(waiter));
        counts.joined.fetch_add(1, std::memory_order_relaxed);
        return true;
    }
    auto started = std::make_shared<flight>();
    started->waiters.push_back(std::move(waiter));
    const bool queued = lane.try_submit(concurrency::job([this, &upstream, project = std::string(project), key, started] {
        const auto outcome = resolve(upstream, project);
        std::vector<page_waiter> waiters;
        {
            std::lock_guard landed(mutex_);
            flights_.erase(key);
            waiters.swap(started->waiters);
        }
        concurrency::answer_each(waiters, outcome, [](const std::exception& failure) {
            spdlog::error("answering an upstream page: {}", failure.what());
        });
    }));
    if (!queued) return false;
    flights_.emplace(key, std::move(started));
    return true;
}

page_outcome page_store::get_now(const upstream_index& upstream, std::string_view project) {
    if (auto found = find(upstream, project)) return std::move(*found);
    counts_of(upstream.name).misses.fetch_add(1, std::memory_order_relaxed);
    return resolve(upstream, std::string(project));
}

page_outcome page_store::resolve(const upstream_index& upstream, const std::string& project) {
    const auto started = generation();  // before the check: a name owned after it cannot be kept
    auto owned = is_owned_(project);
    if (!owned) return {page_outcome::kind::failed, nullptr, owned.error()};
    if (*owned) return {page_outcome::kind::owned, nullptr, std::nullopt};

    const auto key = key_of(upstream.name, project);
    std::shared_ptr<const kept_page> before;
    {
        std::lock_guard lock(mutex_);
        if (auto found = entries_.find(key); found != entries_.end()) before = found->second.kept;
    }
    if (!before) before = load_from_disk(upstream, project);
    if (before && fresh(*before)) {
        land(key, before, started, std::nullopt);
        return {page_outcome::kind::page, before, std::nullopt};
    }
    if (options_.offline) {
        auto offline = make_error(error_kind::timeout, "this index runs --offline and has no copy of " + project +
                                                           "'s page from the upstream index " + upstream.name);
        if (!before) return {page_outcome::kind::failed, nullptr, std::move(offline)};
        land(key, before, started, std::nullopt);
        return {page_outcome::kind::page, before, std::move(offline)};
    }
    return fetch(upstream, project, std::move(before), started);
}

page_outcome page_store::fetch(const upstream_index& upstream, const std::string& project,
                               std::shared_ptr<const kept_page> before, std::uint64_t started) {
    auto& counts = counts_of(upstream.name);
    remote::fetch_request request;
    request.url = page_url(upstream, project);
    request.max_body = options_.max_page_bytes;
    request.headers.emplace_back("Accept", std::string(page_accept));
    if (before && before->page && !before->validator.empty())
        request.headers.emplace_back("If-None-Match", before->validator);
    const auto key = key_of(upstream.name, project);
    auto answer = client_.fetch(request);
    if (!answer) {
        (answer.error().kind == error_kind::too_large ? counts.refused : counts.failed).fetch_add(1);
        return stale_or_failed(upstream, project, std::move(before), answer.error(), started);
    }
    if (answer->status == 304 && before && before->page) {
        counts.not_modified.fetch_add(1);
        auto renewed = std::make_shared<kept_page>(*before);
        renewed->fetched = clock::now();
        save_to_disk(*renewed, {});
        land(key, renewed, started, std::nullopt);
        return {page_outcome::kind::page, std::move(renewed), std::nullopt};
    }
    if (answer->status == 404 || answer->status == 410) {
        counts.not_found.fetch_add(1);
        auto missing = std::make_shared<kept_page>();
        missing->upstream = upstream.name;
        missing->url = request.url;
        missing->fetched = clock::now();
        land(key, missing, started, std::nullopt);
        return {page_outcome::kind::page, std::move(missing), std::nullopt};
    }
    if (answer->status != 200) {
        counts.failed.fetch_add(1);
        return stale_or_failed(upstream, project, std::move(before),
                               make_error(error_kind::upstream, request.url + " answered HTTP " +
                                                                    std::to_string(answer->status)),
                               started);
    }
    auto kept = make_page(upstream, project, answer->body, std::string(answer->header("content-type")),
                          std::string(answer->header("etag")), clock::now());
    if (!kept) {
        counts.refused.fetch_add(1);
        spdlog::warn("upstream {}: {}", upstream.name, kept.error().message);
        return stale_or_failed(upstream, project, std::move(before), make_error(error_kind::upstream, kept.error().message),
                               started);
    }
    counts.fetched.fetch_add(1);
    if ((*kept)->page->left_out > 0) {
        spdlog::info("upstream {}: {} of {}'s files left out, the first because {}", upstream.name,
                     (*kept)->page->left_out, project, (*kept)->page->first_left_out);
    }
    save_to_disk(**kept, answer->body);
    land(key, *kept, started, std::nullopt);
    return {page_outcome::kind::page, std::move(*kept), std::nullopt};
}

page_outcome page_store::stale_or_failed(const upstream_index& upstream, const std::string& project,
                                         std::shared_ptr<const kept_page> before, error failure,
                                         std::uint64_t started) {
    auto reason = upstream_failure(upstream, project, failure);
    spdlog::warn("upstream {}: {}", upstream.name, describe(reason));
    if (!before) return {page_outcome::kind::failed, nullptr, std::move(reason)};
    counts_of(upstream.name).stale.fetch_add(1);
    land(key_of(upstream.name, project), before, started, reason);
    return {page_outcome::kind::page, std::move(before), std::move(reason)};
}

result<std::shared_ptr<const kept_page>> page_store::make_page(const upstream_index& upstream,
                                                              const std::string& project, std::string_view body,
                                                              std::string content_type, std::string validator,
                                                              clock::time_point fetched) const {
    const auto url = page_url(upstream, project);
    const auto format = format_of_content_type(content_type);
    if (!format) {
        return invalid("the upstream page of " + project + " at " + url + " was refused: its Content-Type '" +
                       content_type + "' is none of PEP 691's and not text/html");
    }
    auto page = parse_project_page(body, {project, url, *format});
    if (!page) return page.error();
    if (options_.file_hosts) leave_out_foreign_files(*page, *options_.file_hosts);
    auto kept = std::make_shared<kept_page>();
    kept->upstream = upstream.name;
    kept->url = url;
    kept->page = std::make_shared<const project_page>(std::move(page).value());
    kept->html = rendered(render::upstream_page_html(*kept->page, links_), options_.file_folder);
    kept->json = rendered(render::upstream_page_json(*kept->page, links_), options_.file_folder);
    kept->validator = std::move(validator);
    kept->fetched = fetched;
    kept->content_type = std::move(content_type);
    return std::shared_ptr<const kept_page>(std::move(kept));
}

void page_store::land(const std::string& key, const std::shared_ptr<const kept_page>& kept, std::uint64_t started,
                      const std::optional<error>& failure) {
    const auto project = key.substr(key.find('\n') + 1);
    std::lock_guard lock(mutex_);
    if (cleared_at_ > started) return;
    if (auto forgotten = forgotten_at_.find(project); forgotten != forgotten_at_.end() && forgotten->second > started)
        return;
    auto& slot = entries_[key];
    bytes_ -= slot.bytes;
    slot.kept = kept;
    slot.failure = failure;
    if (failure) slot.failed_at = clock::now();
    slot.bytes = kept->html.held_bytes() + kept->json.held_bytes();
    slot.last_used.store(clock_.fetch_add(1, std::memory_order_relaxed) + 1, std::memory_order_relaxed);
    bytes_ += slot.bytes;
    // Past the cap, the least recently used pages go (they stay on disk); one scan drops enough
    // to leave a tenth of the cap free, so a run of fetches does not scan once each.
    if (bytes_ <= options_.max_memory_bytes) return;
    std::vector<std::pair<std::uint64_t, std::string>> by_use;
    for (const auto& [name, each] : entries_) {
        if (name != key) by_use.emplace_back(each.last_used.load(std::memory_order_relaxed), name);
    }
    std::sort(by_use.begin(), by_use.end());
    for (const auto& [used, name] : by_use) {
        if (bytes_ <= options_.max_memory_bytes / 10 * 9) break;
        const auto victim = entries_.find(name);
        bytes_ -= victim->second.bytes;
        entries_.erase(victim);
    }
}

void page_store::forget(std::string_view project) {
    std::lock_guard lock(mutex_);
    forgotten_at_[std::string(project)] = ++generation_;
    for (const auto& upstream : routes_.upstreams()) {
        if (auto found = entries_.find(key_of(upstream.name, project)); found != entries_.end()) {
            bytes_ -= found->second.bytes;
            entries_.erase(found);
        }
    }
    // On disk too: a restart must not find the page of a name that is owned now.
    if (options_.directory.empty()) return;
    std::error_code ignored;
    for (const auto& upstream : routes_.upstreams()) {
        const auto base = options_.directory / upstream.name / std::string(project);
        std::filesystem::remove(base.string() + ".meta", ignored);
        std::filesystem::remove(base.string() + ".body", ignored);
    }
}

void page_store::forget_all() {
    std::lock_guard lock(mutex_);
    cleared_at_ = ++generation_;
    forgotten_at_.clear();
    entries_.clear();
    bytes_ = 0;
}

// ---- the copy on disk: <upstream>/<project>.meta (one JSON object) and .body (the page as sent) ----

void page_store::save_to_disk(const kept_page& kept, std::string_view body) const {
    if (options_.directory.empty() || !kept.page) return;
    const auto folder = options_.directory / kept.upstream;
    const auto base = (folder / kept.page->project).string();
    const auto temporary = [](const std::string& path) {
        std::ostringstream suffix;
        suffix << std::this_thread::get_id();
        return path + ".partial-" + suffix.str();
    };
    const auto write = [&](const std::string& path, std::string_view bytes) {
        const auto partial = temporary(path);
        {
            std::ofstream out(partial, std::ios::binary | std::ios::trunc);
            out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
            if (!out) return false;
        }
        std::error_code failure;
        std::filesystem::rename(partial, path, failure);
        return !failure;
    };
    std::error_code failure;
    std::filesystem::create_directories(folder, failure);
    // A body first, then the meta that names it: a meta is never read beside an older body.
    if (!body.empty() && !write(base + ".body", body)) return spdlog::warn("upstream: could not write {}.body", base);
    const json::object meta{{"url", kept.url},
                            {"etag", kept.validator},
                            {"fetched_ms", unix_ms(kept.fetched)},
                            {"content_type", kept.content_type},
                            {"body_sha256_etag", kept.html.etag}};
    if (!write(base + ".meta", json::serialize(meta))) spdlog::warn("upstream: could not write {}.meta", base);
}

std::shared_ptr<const kept_page> page_store::load_from_disk(const upstream_index& upstream,
                                                            const std::string& project) const {
    if (options_.directory.empty()) return nullptr;
    const auto base = (options_.directory / upstream.name / project).string();
    const auto read = [](const std::string& path, std::uint64_t limit) -> std::optional<std::string> {
        std::ifstream in(path, std::ios::binary);
        if (!in) return std::nullopt;
        std::string bytes;
        char chunk[65536];
        while (in.read(chunk, sizeof chunk) || in.gcount() > 0) {
            bytes.append(chunk, static_cast<std::size_t>(in.gcount()));
            if (bytes.size() > limit) return std::nullopt;
        }
        return bytes;
    };
    const auto meta_text = read(base + ".meta", 64 * 1024);
    const auto body = meta_text ? read(base + ".body", options_.max_page_bytes) : std::nullopt;
    if (!body) return nullptr;
    boost::system::error_code failure;
    const auto meta = json::parse(*meta_text, failure);
    if (failure || !meta.is_object()) return nullptr;
    const auto& fields = meta.get_object();
    const auto text = [&](std::string_view name) {
        const auto* value = fields.if_contains(name);
        return value && value->is_string() ? std::string(value->get_string()) : std::string();
    };
    const auto* fetched_ms = fields.if_contains("fetched_ms");
    // A page of another URL (the upstream was configured elsewhere since) is no copy of this one.
    if (text("url") != page_url(upstream, project) || !fetched_ms || !fetched_ms->is_int64()) return nullptr;
    auto kept = make_page(upstream, project, *body, text("content_type"), text("etag"),
                          clock::time_point(std::chrono::milliseconds(fetched_ms->get_int64())));
    if (!kept) {
        spdlog::warn("upstream {}: the copy of {} on disk no longer parses, so it goes: {}", upstream.name, project,
                     kept.error().message);
        std::error_code ignored;
        std::filesystem::remove(base + ".meta", ignored);
        return nullptr;
    }
    return *kept;
}

page_store::statistics page_store::stats() const {
    statistics out;
    for (const auto& each : counters_) {
        out.upstreams.push_back({each->upstream, each->hits.load(), each->misses.load(), each->joined.load(),
                                 each->fetched.load(), each->not_modified.load(), each->not_found.load(),
                                 each->refused.load(), each->failed.load(), each->stale.load()});
    }
    std::lock_guard lock(mutex_);
    out.pages = entries_.size();
    out.bytes = bytes_;
    return out;
}

}  // namespace wheelhouse::upstream
