#include "wheelhouse/app/page_cache.hpp"

#include <chrono>
#include <iterator>
#include <mutex>

#include <spdlog/spdlog.h>

#include "wheelhouse/concurrency/single_flight.hpp"
#include "wheelhouse/http/conditional.hpp"

namespace wheelhouse::app {

void rendered_page::stamp_now() {
    using namespace std::chrono;
    rendered_ms = duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count();
    const auto copy = [](std::array<char, 29>& out, const std::string& date) {
        date.copy(out.data(), out.size());  // IMF-fixdate is always 29 characters
    };
    copy(rendered_second, http_conditional::http_date(rendered_ms / 1000));
    copy(next_second, http_conditional::http_date(rendered_ms / 1000 + 1));
}

struct page_cache::scope_pages {
    std::unordered_map<std::string, std::shared_ptr<const rendered_page>> pages;  // by page_name()
    std::size_t bytes = 0;                                   // of every body in `pages`
    std::atomic<std::uint64_t> last_used{0};
};

page_cache::page_cache(const options& settings) : options_(settings) {}
page_cache::~page_cache() = default;

std::string page_cache::page_name(pep691::page_format format, std::string_view project) {
    std::string name;
    name.reserve(project.size() + 1);
    name.push_back(format == pep691::page_format::json ? 'j' : 'h');
    name += project;
    return name;
}

struct page_cache::flight {
    std::uint64_t generation = 0;  // the catalog's, when the render was queued
    std::vector<page_waiter> waiters;
};

std::string page_cache::flight_name(const page_key& key) {
    // No scope holds '\n' (selectors and pattern lists are printable), so the name is unambiguous.
    return key.scope + "\n" + page_name(key.format, key.project);
}

std::shared_ptr<const rendered_page> page_cache::find(const page_key& key) const {
    const auto name = page_name(key.format, key.project);
    std::shared_lock lock(mutex_);
    const auto scope = scopes_.find(key.scope);
    if (scope == scopes_.end()) return nullptr;
    const auto found = scope->second->pages.find(name);
    if (found == scope->second->pages.end()) return nullptr;
    hits_.fetch_add(1, std::memory_order_relaxed);
    if (!key.scope.empty())
        scope->second->last_used.store(clock_.fetch_add(1, std::memory_order_relaxed) + 1, std::memory_order_relaxed);
    return found->second;
}

bool page_cache::render_once(const page_key& key, renderer render, page_waiter waiter, concurrency::worker_pool& pool) {
    const auto name = flight_name(key);
    std::unique_lock flights_lock(flights_mutex_);
    std::uint64_t generation = 0;
    {
        std::shared_lock lock(mutex_);
        generation = generation_;
    }
    if (auto joined = flights_.find(name); joined != flights_.end() && joined->second->generation == generation) {
        joined->second->waiters.push_back(std::move(waiter));
        renders_joined_.fetch_add(1, std::memory_order_relaxed);
        return true;
    }
    // A flight lands its page before it leaves flights_, so a page that landed since the
    // caller's miss is found here, not rendered twice.
    if (auto page = find(key)) {
        flights_lock.unlock();
        waiter(std::optional(std::move(*page)));
        return true;
    }
    auto rendering = std::make_shared<flight>();
    rendering->generation = generation;
    rendering->waiters.push_back(std::move(waiter));
    const bool queued = pool.try_submit(concurrency::job(
        [this, key, rendering, render = std::move(render)] { land(key, rendering, render); }));
    if (!queued) return false;
    flights_[name] = rendering;  // replaces a flight that went stale; its waiters still get its page
    renders_started_.fetch_add(1, std::memory_order_relaxed);
    return true;
}

void page_cache::land(const page_key& key, const std::shared_ptr<flight>& rendering, const renderer& render) {
    const page_result page = get_or_render(key, render);
    std::vector<page_waiter> waiters;
    {
        std::lock_guard lock(flights_mutex_);
        if (auto current = flights_.find(flight_name(key)); current != flights_.end() && current->second == rendering)
            flights_.erase(current);
        waiters.swap(rendering->waiters);
    }
    concurrency::answer_each(waiters, page, [](const std::exception& failure) {
        spdlog::error("answering a rendered page: {}", failure.what());
    });
}

result<std::optional<rendered_page>> page_cache::get_or_render(const page_key& key, const renderer& render) {
    const auto name = page_name(key.format, key.project);
    const bool variant = !key.scope.empty();
    std::uint64_t generation_before = 0;
    {
        std::shared_lock lock(mutex_);
        if (auto scope = scopes_.find(key.scope); scope != scopes_.end()) {
            if (auto found = scope->second->pages.find(name); found != scope->second->pages.end()) {
                hits_.fetch_add(1, std::memory_order_relaxed);
                if (variant) scope->second->last_used.store(clock_.fetch_add(1, std::memory_order_relaxed) + 1,
                                                           std::memory_order_relaxed);
                return std::optional(*found->second);
            }
        }
        generation_before = generation_;
    }
    misses_.fetch_add(1, std::memory_order_relaxed);
    auto body = render();
    if (!body) return body.error();
    if (!*body) return std::optional<rendered_page>();
    // Rendering grows the string by doubling; kept as is, a page would hold up to twice its size.
    (**body).shrink_to_fit();
    rendered_page page{std::make_shared<const std::string>(std::move(**body)), {}, nullptr};
    page.etag = http_conditional::strong_entity_tag(*page.body);
    if (page.body->size() >= storage::page_file_threshold) page.body_file = storage::page_file(*page.body, options_.file_folder);
    page.stamp_now();

    std::unique_lock lock(mutex_);
    if (generation_ != generation_before || (variant && options_.max_variant_scopes == 0)) return std::optional(page);
    auto [slot, created] = scopes_.try_emplace(key.scope);
    if (created) slot->second = std::make_unique<scope_pages>();
    auto& scope = *slot->second;
    if (scope.pages.try_emplace(name, std::make_shared<const rendered_page>(page)).second) {
        ++entries_;
        bytes_ += page.held_bytes();
        scope.bytes += page.held_bytes();
    }
    if (variant) {
        scope.last_used.store(clock_.fetch_add(1, std::memory_order_relaxed) + 1, std::memory_order_relaxed);
        const std::size_t kept_variant_scopes = scopes_.size() - (scopes_.contains("") ? 1 : 0);
        if (created && kept_variant_scopes > options_.max_variant_scopes) drop_least_recent_variant_scope(&scope);
        while (variant_bytes() > options_.max_variant_bytes && drop_least_recent_variant_scope(&scope)) {
        }
        if (variant_bytes() > options_.max_variant_bytes) {
            erase_page(scope, name);
            if (scope.pages.empty()) scopes_.erase(key.scope);
        }
    }
    return std::optional(std::move(page));
}

std::size_t page_cache::variant_bytes() const {
    std::size_t total = 0;
    for (const auto& [name, scope] : scopes_) total += name.empty() ? 0 : scope->bytes;
    return total;
}

bool page_cache::drop_least_recent_variant_scope(const scope_pages* keep) {
    auto oldest = scopes_.end();
    for (auto it = scopes_.begin(); it != scopes_.end(); ++it) {
        if (it->first.empty() || it->second.get() == keep) continue;
        if (oldest == scopes_.end() || it->second->last_used.load(std::memory_order_relaxed) <
                                           oldest->second->last_used.load(std::memory_order_relaxed))
            oldest = it;
    }
    if (oldest == scopes_.end()) return false;
    bytes_ -= oldest->second->bytes;
    entries_ -= oldest->second->pages.size();
    scopes_.erase(oldest);
    ++scopes_dropped_;
    return true;
}

void page_cache::erase_page(scope_pages& scope, const std::string& name) {
    if (auto page = scope.pages.find(name); page != scope.pages.end()) {
        bytes_ -= page->second->held_bytes();
        scope.bytes -= page->second->held_bytes();
        --entries_;
        scope.pages.erase(page);
    }
}

void page_cache::invalidate_project(std::string_view project) {
    std::unique_lock lock(mutex_);
    ++generation_;
    for (auto it = scopes_.begin(); it != scopes_.end();) {
        auto& scope = *it->second;
        for (const auto format : {pep691::page_format::html, pep691::page_format::json}) {
            erase_page(scope, page_name(format, project));
            erase_page(scope, page_name(format, ""));
        }
        it = scope.pages.empty() ? scopes_.erase(it) : std::next(it);
    }
}

void page_cache::clear() {
    std::unique_lock lock(mutex_);
    ++generation_;
    scopes_.clear();
    entries_ = 0;
    bytes_ = 0;
}

page_cache::statistics page_cache::stats() const {
    std::shared_lock lock(mutex_);
    statistics out;
    out.hits = hits_.load(std::memory_order_relaxed);
    out.misses = misses_.load(std::memory_order_relaxed);
    out.entries = entries_;
    out.bytes = bytes_;
    out.variant_scopes = scopes_.size() - (scopes_.contains("") ? 1 : 0);
    out.variant_scopes_dropped = scopes_dropped_;
    out.renders_started = renders_started_.load(std::memory_order_relaxed);
    out.renders_joined = renders_joined_.load(std::memory_order_relaxed);
    return out;
}

}  // namespace wheelhouse::app
