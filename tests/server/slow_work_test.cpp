// Issue 15, item 4: nothing slow on an I/O thread. A page the cache misses is rendered on the
// read pool, once however many ask for it; a token is checked from memory until it is revoked
// (here or by another process) or expires.

#include <catch2/catch.hpp>

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

#include "test_server.hpp"
#include "wheelhouse/auth/token_store.hpp"
#include "wheelhouse/sqlite/connection.hpp"
#include "wheelhouse/transport/responses.hpp"

using namespace wheelhouse;
using namespace wheelhouse::testing;

namespace {

// A read-pool route that holds its worker until released: the pool is busy for as long as a
// test needs it to be.
struct pool_gate {
    std::mutex mutex;
    std::condition_variable changed;
    bool open = false;
    int holding = 0;

    void hold() {
        std::unique_lock lock(mutex);
        ++holding;
        changed.notify_all();
        changed.wait(lock, [&] { return open; });
    }
    void wait_until_held(int workers) {
        std::unique_lock lock(mutex);
        REQUIRE(changed.wait_for(lock, std::chrono::seconds(10), [&] { return holding >= workers; }));
    }
    void release() {
        std::lock_guard lock(mutex);
        open = true;
        changed.notify_all();
    }
};
pool_gate* gate = nullptr;

app::route_answer held(app::route_context&, app::route_request& request) {
    gate->hold();
    return transport::make_text_response(request.header(), http::status::ok, "released");
}

server_settings one_read_worker(std::size_t queue) {
    server_settings settings;
    settings.app.read_workers = 1;
    settings.app.read_queue = queue;
    settings.extra_routes = {{app::GET, "/test/hold", app::access::anyone, app::project_scope::none, "",
                              app::audience::package_tools, app::body_kind::none, app::lane::read_pool, metrics::route::other,
                              held}};
    return settings;
}

// Polls `done` for up to ten seconds.
template <class Condition>
bool eventually(Condition done) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (!done()) {
        if (std::chrono::steady_clock::now() > deadline) return false;
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return true;
}

const std::string wheel_name = "flash_attn-2.8.3-cp312-cp312-linux_x86_64.whl";

std::string bearer(const std::string& secret) { return "Bearer " + secret; }

std::string make_token(test_server& server, std::string_view name,
                       std::optional<std::chrono::seconds> lifetime = std::nullopt) {
    auto created = auth::token_store(server.catalog()).create(name, auth::scope::read, {}, lifetime, "test");
    REQUIRE(created);
    return created->secret;
}

unsigned read_as(test_server& server, const std::string& secret, std::string_view target = "/simple/") {
    return server.get(target, {{http::field::authorization, bearer(secret)}}).result_int();
}

}  // namespace

TEST_CASE("slow work: concurrent misses of one page render it once on the read pool, the others wait for it",
          "[server][slow_work]") {
    pool_gate holding;
    gate = &holding;
    test_server server(one_read_worker(64));
    server.ingest(make_wheel("flash_attn", "2.8.3"), wheel_name);
    REQUIRE(server.get("/simple/").result_int() == 200);  // cached: answered inline from now on

    std::thread holder([&] { CHECK_THAT(server.get("/test/hold").body(), Catch::Contains("released")); });
    holding.wait_until_held(1);
    const auto before = server.pages().stats();

    constexpr int clients = 8;
    std::vector<http_response> answers(clients);
    std::vector<std::thread> readers;
    for (int i = 0; i < clients; ++i) readers.emplace_back([&, i] { answers[i] = server.get("/simple/flash-attn/"); });
    // Every miss is in: one render queued behind the held worker, the rest waiting for it.
    REQUIRE(eventually([&] { return server.pages().stats().renders_joined - before.renders_joined == clients - 1; }));
    CHECK(server.pages().stats().renders_started - before.renders_started == 1);
    // Meanwhile a cached page needs no worker.
    const auto hit = server.get("/simple/");
    CHECK(hit.result_int() == 200);
    CHECK_THAT(hit.body(), Catch::Contains("flash-attn"));

    holding.release();
    for (auto& reader : readers) reader.join();
    holder.join();
    for (const auto& answer : answers) {
        CHECK(answer.result_int() == 200);
        CHECK_THAT(answer.body(), Catch::Contains(wheel_name));
        CHECK(answer[http::field::etag] == answers.front()[http::field::etag]);
    }
    const auto after = server.pages().stats();
    CHECK(after.renders_started - before.renders_started == 1);
    CHECK(after.misses - before.misses == 1);  // one render of the catalog, not eight
    CHECK(server.get("/simple/flash-attn/").result_int() == 200);
    CHECK(server.pages().stats().hits == after.hits + 1);
}

TEST_CASE("slow work: a miss with the read pool full gets 503 and Retry-After, a cached page is still served",
          "[server][slow_work]") {
    pool_gate holding;
    gate = &holding;
    test_server server(one_read_worker(1));
    server.ingest(make_wheel("flash_attn", "2.8.3"), wheel_name);
    server.ingest(make_wheel("einops", "0.8.1"), "einops-0.8.1-py3-none-any.whl");
    REQUIRE(server.get("/simple/").result_int() == 200);

    const auto renders_before = server.pages().stats().renders_started;
    std::thread holder([&] { server.get("/test/hold"); });
    holding.wait_until_held(1);
    http_response queued;
    std::thread waiting([&] { queued = server.get("/simple/flash-attn/"); });  // its render fills the queue
    REQUIRE(eventually([&] { return server.pages().stats().renders_started == renders_before + 1; }));

    const auto busy = server.get("/simple/einops/");
    CHECK(busy.result_int() == 503);
    CHECK(busy[http::field::retry_after] == "2");
    CHECK_THAT(busy.body(), Catch::Contains("the index is busy answering other reads; retry shortly"));
    CHECK(server.get("/simple/").result_int() == 200);

    holding.release();
    waiting.join();
    holder.join();
    CHECK(queued.result_int() == 200);
    CHECK(server.get("/simple/einops/").result_int() == 200);
    CHECK(server.get("/variants/cpu/simple/no-such-project/").result_int() == 404);
}

TEST_CASE("slow work: METADATA is read on the read pool", "[server][slow_work]") {
    pool_gate holding;
    gate = &holding;
    test_server server(one_read_worker(1));
    const auto file = server.ingest(make_wheel("flash_attn", "2.8.3"), wheel_name);
    const std::string metadata = "/files/" + file.sha256 + "/" + wheel_name + ".metadata";
    REQUIRE(server.get(metadata).result_int() == 200);

    std::thread holder([&] { server.get("/test/hold"); });
    holding.wait_until_held(1);
    // The first request waits in the queue (its client gives up after a while), the next finds it full.
    const std::string request = "GET " + metadata + " HTTP/1.1\r\nHost: test\r\nConnection: close\r\n\r\n";
    REQUIRE(eventually([&] { return server.raw(request, std::chrono::milliseconds(300)).starts_with("HTTP/1.1 503"); }));
    // The wheel itself is still sent from the I/O thread.
    CHECK(server.get("/files/" + file.sha256 + "/" + wheel_name).result_int() == 200);
    holding.release();
    holder.join();
    http_response answer;  // once the queued request's job has left the queue
    REQUIRE(eventually([&] { return (answer = server.get(metadata)).result_int() == 200; }));
    CHECK_THAT(answer.body(), Catch::Contains("Name: flash_attn"));
}

TEST_CASE("slow work: a token is checked from memory until it is revoked here or by another connection",
          "[server][slow_work][auth]") {
    server_settings settings;
    settings.app.private_index = true;
    test_server server(settings);
    server.ingest(make_wheel("flash_attn", "2.8.3"), wheel_name);
    const auto reader = make_token(server, "reader");
    const auto other = make_token(server, "other-reader");
    auto root = auth::token_store(server.catalog()).create("root", auth::scope::admin, {}, std::nullopt, "test");
    REQUIRE(root);

    const auto before = server.tokens().cache_stats();
    for (int i = 0; i < 5; ++i) CHECK(read_as(server, reader) == 200);
    auto checks = server.tokens().cache_stats();
    CHECK(checks.lookups - before.lookups == 1);  // one read of the catalog, four answers from memory
    CHECK(checks.hits - before.hits == 4);

    // Revoked through the API: the next request is refused.
    const auto revoked = server.request(http::verb::delete_, "/api/v1/tokens/reader",
                                        {{http::field::authorization, bearer(root->secret)}});
    REQUIRE(revoked.result_int() == 200);
    const auto refused = server.get("/simple/", {{http::field::authorization, bearer(reader)}});
    CHECK(refused.result_int() == 401);
    CHECK_THAT(refused.body(), Catch::Contains("(unknown, expired or revoked)"));

    // Revoked by another connection (`wheelhouse token revoke` in another process): the same.
    CHECK(read_as(server, other) == 200);
    CHECK(read_as(server, other) == 200);
    checks = server.tokens().cache_stats();
    {
        auto elsewhere = sqlite::connection::open(server.data() / "catalog.db", {});
        REQUIRE(elsewhere);
        REQUIRE(elsewhere->execute("UPDATE tokens SET revoked_ms = 1 WHERE name = 'other-reader'"));
    }
    CHECK(read_as(server, other) == 401);
    CHECK(server.tokens().cache_stats().lookups == checks.lookups + 1);  // read again, not answered from memory
    CHECK(read_as(server, other) == 401);
    // And a token another process creates is taken at once: no refusal was kept for it.
    {
        auto elsewhere = sqlite::connection::open(server.data() / "catalog.db", {});
        REQUIRE(elsewhere);
        REQUIRE(elsewhere->execute("UPDATE tokens SET revoked_ms = NULL WHERE name = 'other-reader'"));
    }
    CHECK(read_as(server, other) == 200);
}

TEST_CASE("slow work: a cached token stops working when it expires", "[server][slow_work][auth]") {
    server_settings settings;
    settings.app.private_index = true;
    test_server server(settings);
    const auto brief = make_token(server, "brief", std::chrono::seconds(1));
    const auto created = std::chrono::steady_clock::now();
    const auto before = server.tokens().cache_stats();
    CHECK(read_as(server, brief) == 200);
    CHECK(read_as(server, brief) == 200);
    if (std::chrono::steady_clock::now() - created < std::chrono::milliseconds(900))
        CHECK(server.tokens().cache_stats().hits > before.hits);  // the second answer came from memory
    std::this_thread::sleep_until(created + std::chrono::milliseconds(1100));
    CHECK(read_as(server, brief) == 401);
    CHECK(read_as(server, brief) == 401);
}
