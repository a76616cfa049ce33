#include <catch2/catch.hpp>

#include <algorithm>
#include <condition_variable>
#include <mutex>
#include <string>
#include <vector>

#include <fcntl.h>
#include <unistd.h>

#include "wheelhouse/app/page_cache.hpp"

using namespace wheelhouse;
using app::page_cache;
using app::page_key;
using pep691::page_format;

namespace {

std::string body_of(const page_key& key) {
    return key.scope + "/" + key.project + (key.format == page_format::json ? ".json" : ".html");
}

// Fetches `key`, rendering its body when it is not cached; returns whether it had to render.
bool fetch(page_cache& cache, const page_key& key) {
    bool rendered = false;
    const auto page = cache.get_or_render(key, [&]() -> result<std::optional<std::string>> {
        rendered = true;
        return std::optional(body_of(key));
    });
    REQUIRE(page);
    REQUIRE(*page);
    CHECK(*(*page)->body == body_of(key));
    return rendered;
}

page_key variant(std::string scope, std::string project = "flash-attn", page_format format = page_format::html) {
    return {std::move(scope), std::move(project), format};
}

}  // namespace

TEST_CASE("page cache: variant scopes past the cap drop the least recently used, never /simple/",
          "[server][page_cache]") {
    page_cache cache(page_cache::options{.max_variant_scopes = 3});
    CHECK(fetch(cache, {"", "flash-attn", page_format::html}));
    CHECK(fetch(cache, {"", "", page_format::json}));
    CHECK(fetch(cache, variant("cu130")));
    CHECK(fetch(cache, variant("cu130", "flash-attn", page_format::json)));
    CHECK(fetch(cache, variant("cu128")));
    CHECK(fetch(cache, variant("cpu")));
    CHECK(cache.stats().variant_scopes == 3);
    CHECK(cache.stats().entries == 6);

    CHECK_FALSE(fetch(cache, variant("cu130")));  // cu130 is now the most recent; cu128 the least
    CHECK(fetch(cache, variant("rocm6.4")));
    auto stats = cache.stats();
    CHECK(stats.variant_scopes == 3);
    CHECK(stats.variant_scopes_dropped == 1);
    CHECK(stats.entries == 6);
    CHECK(stats.bytes == body_of({"", "flash-attn", page_format::html}).size() +
                             body_of({"", "", page_format::json}).size() + body_of(variant("cu130")).size() +
                             body_of(variant("cu130", "flash-attn", page_format::json)).size() +
                             body_of(variant("cpu")).size() + body_of(variant("rocm6.4")).size());

    CHECK(fetch(cache, variant("cu128")));  // dropped: rendered again, and cpu goes
    CHECK_FALSE(fetch(cache, variant("cu130", "flash-attn", page_format::json)));
    CHECK_FALSE(fetch(cache, variant("rocm6.4")));
    CHECK(fetch(cache, variant("cpu")));
    // /simple/ stayed through every drop
    CHECK_FALSE(fetch(cache, {"", "flash-attn", page_format::html}));
    CHECK_FALSE(fetch(cache, {"", "", page_format::json}));

    // a stream of new selectors never grows the cache past the cap
    for (int i = 0; i < 500; ++i) fetch(cache, variant("torch2." + std::to_string(i)));
    stats = cache.stats();
    CHECK(stats.variant_scopes == 3);
    CHECK(stats.entries == 2 + 3);
}

TEST_CASE("page cache: variant pages past the byte cap drop whole scopes, and an oversized page is not kept",
          "[server][page_cache]") {
    // Each variant body here is 20-odd bytes; a cap of 60 holds two or three of them.
    page_cache cache(page_cache::options{.max_variant_scopes = 64, .max_variant_bytes = 60});
    CHECK(fetch(cache, {"", "flash-attn", page_format::html}));
    CHECK(fetch(cache, variant("cu130")));
    CHECK(fetch(cache, variant("cu128")));
    CHECK_FALSE(fetch(cache, variant("cu130")));  // cu128 is the least recent now
    for (int i = 0; i < 50; ++i) fetch(cache, variant("torch2." + std::to_string(i)));
    auto stats = cache.stats();
    const std::size_t simple_bytes = body_of({"", "flash-attn", page_format::html}).size();
    CHECK(stats.bytes - simple_bytes <= 60);
    CHECK(stats.variant_scopes >= 1);
    CHECK(stats.variant_scopes_dropped >= 49);
    CHECK_FALSE(fetch(cache, {"", "flash-attn", page_format::html}));  // /simple/ is never dropped

    page_cache tiny(page_cache::options{.max_variant_scopes = 64, .max_variant_bytes = 4});
    CHECK(fetch(tiny, variant("cu130")));  // served, but larger than the whole cap
    CHECK(fetch(tiny, variant("cu130")));  // so rendered again
    CHECK(tiny.stats().variant_scopes == 0);
    CHECK(tiny.stats().bytes == 0);
}

TEST_CASE("page cache: a project's change drops its pages in every scope and every list", "[server][page_cache]") {
    page_cache cache;
    for (const std::string scope : {"", "cu130-torch2.10-sm89", "cpu"}) {
        for (const auto format : {page_format::html, page_format::json}) {
            fetch(cache, {scope, "flash-attn", format});
            fetch(cache, {scope, "einops", format});
            fetch(cache, {scope, "", format});
        }
    }
    CHECK(cache.stats().entries == 18);
    cache.invalidate_project("flash-attn");
    CHECK(cache.stats().entries == 6);
    for (const std::string scope : {"", "cu130-torch2.10-sm89", "cpu"}) {
        for (const auto format : {page_format::html, page_format::json}) {
            CAPTURE(scope);
            CHECK(fetch(cache, {scope, "flash-attn", format}));
            CHECK(fetch(cache, {scope, "", format}));
            CHECK_FALSE(fetch(cache, {scope, "einops", format}));
        }
    }
    cache.invalidate_project("einops");
    cache.invalidate_project("flash-attn");
    CHECK(cache.stats().entries == 0);
    CHECK(cache.stats().bytes == 0);
    CHECK(cache.stats().variant_scopes == 0);  // emptied scopes go too
}

TEST_CASE("page cache: nothing is kept for what was not found, failed, or went stale while rendering",
          "[server][page_cache]") {
    page_cache cache;
    const auto missing = cache.get_or_render(variant("cu130", "nothing"),
                                             []() -> result<std::optional<std::string>> { return std::optional<std::string>(); });
    REQUIRE(missing);
    CHECK_FALSE(*missing);
    const auto failed = cache.get_or_render(variant("cu130"), []() -> result<std::optional<std::string>> {
        return make_error(error_kind::internal, "disk on fire");
    });
    REQUIRE_FALSE(failed);
    CHECK(failed.error().message == "disk on fire");
    const auto stale = cache.get_or_render(variant("cu130"), [&]() -> result<std::optional<std::string>> {
        cache.invalidate_project("flash-attn");  // the catalog changed while this page rendered
        return std::optional<std::string>("old");
    });
    REQUIRE(stale);
    CHECK(*(*stale)->body == "old");
    CHECK(cache.stats().entries == 0);
    CHECK(cache.stats().variant_scopes == 0);

    page_cache uncached_variants(page_cache::options{.max_variant_scopes = 0});
    CHECK(fetch(uncached_variants, variant("cu130")));
    CHECK(fetch(uncached_variants, variant("cu130")));
    CHECK(fetch(uncached_variants, {"", "flash-attn", page_format::html}));
    CHECK_FALSE(fetch(uncached_variants, {"", "flash-attn", page_format::html}));
}

namespace {

// Renders that wait for the test to let them finish, counting how many began.
struct held_renders {
    std::mutex mutex;
    std::condition_variable changed;
    bool open = false;
    int started = 0;

    page_cache::renderer render(std::string body) {
        return [this, body]() -> result<std::optional<std::string>> {
            std::unique_lock lock(mutex);
            ++started;
            changed.notify_all();
            changed.wait(lock, [&] { return open; });
            return std::optional(body);
        };
    }
    void wait_started(int renders) {
        std::unique_lock lock(mutex);
        REQUIRE(changed.wait_for(lock, std::chrono::seconds(10), [&] { return started >= renders; }));
    }
    void release() {
        std::lock_guard lock(mutex);
        open = true;
        changed.notify_all();
    }
};

// What each waiter was handed, in the order they were answered.
struct answers {
    std::mutex mutex;
    std::vector<std::string> bodies;

    page_cache::page_waiter waiter() {
        return [this](const page_cache::page_result& page) {
            REQUIRE(page);
            REQUIRE(*page);
            std::lock_guard lock(mutex);
            bodies.push_back(*(*page)->body);
        };
    }
};

}  // namespace

TEST_CASE("page cache: misses of one page while it renders wait for that one render", "[server][page_cache]") {
    page_cache cache;
    held_renders renders;
    answers answered;
    const page_key key{"", "flash-attn", page_format::json};
    {
        concurrency::worker_pool pool(2, 8);
        for (int i = 0; i < 5; ++i) REQUIRE(cache.render_once(key, renders.render("page"), answered.waiter(), pool));
        // Another page renders apart.
        REQUIRE(cache.render_once(variant("cu130"), renders.render("cu130 page"), answered.waiter(), pool));
        renders.release();
        pool.shutdown();
    }
    CHECK(renders.started == 2);
    CHECK(answered.bodies.size() == 6);
    CHECK(std::count(answered.bodies.begin(), answered.bodies.end(), "page") == 5);
    const auto stats = cache.stats();
    CHECK(stats.renders_started == 2);
    CHECK(stats.renders_joined == 4);
    CHECK(stats.misses == 2);
    REQUIRE(cache.find(key));
    CHECK(*cache.find(key)->body == "page");

    // Once it has landed, a caller that missed it a moment ago is answered at once, unrendered.
    concurrency::worker_pool pool(1, 1);
    REQUIRE(cache.render_once(key, renders.render("again"), answered.waiter(), pool));
    CHECK(answered.bodies.back() == "page");
    CHECK(cache.stats().renders_started == 2);
}

TEST_CASE("page cache: a change while a page renders sends later misses to a render of their own",
          "[server][page_cache]") {
    page_cache cache;
    held_renders first;
    answers before_change;
    answers after_change;
    const page_key key{"", "flash-attn", page_format::html};
    concurrency::worker_pool pool(2, 8);
    REQUIRE(cache.render_once(key, first.render("old"), before_change.waiter(), pool));
    REQUIRE(cache.render_once(key, first.render("old"), before_change.waiter(), pool));
    first.wait_started(1);
    cache.invalidate_project("flash-attn");  // an upload committed while it renders
    held_renders second;
    REQUIRE(cache.render_once(key, second.render("new"), after_change.waiter(), pool));
    second.release();
    first.release();
    pool.shutdown();
    CHECK(before_change.bodies == std::vector<std::string>{"old", "old"});
    CHECK(after_change.bodies == std::vector<std::string>{"new"});
    CHECK(cache.stats().renders_started == 2);
    REQUIRE(cache.find(key));
    CHECK(*cache.find(key)->body == "new");  // the stale render was not kept
}

TEST_CASE("page cache: a miss finds the pool full: refused at once, its waiter never called", "[server][page_cache]") {
    page_cache cache;
    held_renders renders;
    answers answered;
    concurrency::worker_pool pool(1, 1);
    REQUIRE(cache.render_once(variant("cu130"), renders.render("running"), answered.waiter(), pool));
    renders.wait_started(1);  // the worker holds the first render
    REQUIRE(cache.render_once(variant("cu128"), renders.render("queued"), answered.waiter(), pool));
    CHECK_FALSE(cache.render_once(variant("cpu"), renders.render("refused"), answered.waiter(), pool));
    // Refused, it left no flight behind: asked again later, it renders.
    renders.release();
    pool.shutdown();
    concurrency::worker_pool later(1, 1);
    REQUIRE(cache.render_once(variant("cpu"), renders.render("rendered later"), answered.waiter(), later));
    later.shutdown();
    CHECK(answered.bodies.size() == 3);
    CHECK(std::count(answered.bodies.begin(), answered.bodies.end(), "refused") == 0);
}

TEST_CASE("page cache: a large page keeps a read-only file copy of its body (sealed in memory without a folder), counted in its bytes",
          "[server][page_cache]") {
    page_cache cache;
    const std::string large(storage::page_file_threshold + 123, 'x');
    const auto render_large = []() -> result<std::optional<std::string>> {
        return std::optional(std::string(storage::page_file_threshold + 123, 'x'));
    };
    const auto page = cache.get_or_render({"", "big", page_format::json}, render_large);
    REQUIRE(page);
    REQUIRE(*page);
    const auto& file = (*page)->body_file;
    REQUIRE(file);
    // The copy holds the body, byte for byte, and no one can change it: sendfile sends it as is.
    std::string copy(large.size() + 1, '\0');
    CHECK(::pread(file->get(), copy.data(), copy.size(), 0) == static_cast<ssize_t>(large.size()));
    copy.resize(large.size());
    CHECK(copy == large);
    CHECK((::fcntl(file->get(), F_GET_SEALS) & (F_SEAL_WRITE | F_SEAL_GROW | F_SEAL_SHRINK)) ==
          (F_SEAL_WRITE | F_SEAL_GROW | F_SEAL_SHRINK));
    CHECK(::pwrite(file->get(), "y", 1, 0) < 0);
    CHECK(cache.stats().bytes == 2 * large.size());

    // A small page stays in memory alone.
    const auto small = cache.get_or_render({"", "small", page_format::json},
                                           []() -> result<std::optional<std::string>> { return std::optional(std::string("{}")); });
    REQUIRE(small);
    CHECK_FALSE((**small).body_file);
    CHECK(cache.stats().bytes == 2 * large.size() + 2);
    cache.invalidate_project("big");
    CHECK(cache.stats().bytes == 2);
}
