#include <catch2/catch.hpp>

#include <atomic>
#include <map>
#include <mutex>
#include <thread>
#include <vector>

#include "jwt_signer.hpp"
#include "wheelhouse/oidc/key_cache.hpp"

using namespace wheelhouse;
using namespace wheelhouse::testing;
using namespace std::chrono_literals;

namespace {

constexpr std::string_view issuer = "https://ci.example";

const signing_key& first_key() {
    static const auto key = signing_key::p256("first");
    return key;
}
const signing_key& second_key() {
    static const auto key = signing_key::p256("second");
    return key;
}

result<std::string> body(std::string text) { return text; }

// An issuer on a fake network: what each URL answers now, every request made, and a clock.
struct fake_issuer {
    std::mutex mutex;
    std::map<std::string, result<std::string>> answers;
    std::vector<std::string> requested;
    std::chrono::steady_clock::time_point now{std::chrono::hours(1000)};

    void publish(std::initializer_list<const signing_key*> keys) {
        std::lock_guard lock(mutex);
        answers.insert_or_assign(std::string(issuer) + "/.well-known/openid-configuration",
                                 body(R"({"issuer": "https://ci.example", "jwks_uri": "https://ci.example/keys"})"));
        answers.insert_or_assign("https://ci.example/keys", body(key_set_json(keys)));
    }
    void go_down() {
        std::lock_guard lock(mutex);
        for (auto& [url, answer] : answers) answer = make_error(error_kind::timeout, "connect timed out");
    }
    std::size_t fetches() {
        std::lock_guard lock(mutex);
        return requested.size();
    }

    oidc::key_cache cache(oidc::key_cache::options options = {}) {
        return oidc::key_cache(
            [this](const std::string& url, std::size_t) -> result<std::string> {
                std::lock_guard lock(mutex);
                requested.push_back(url);
                const auto found = answers.find(url);
                if (found == answers.end()) return make_error(error_kind::upstream, "answered HTTP 404, not 200");
                return found->second;
            },
            options, [this] { return now; });
    }
};

}  // namespace

TEST_CASE("key_cache: keys come from the discovery document's JWK set, fetched once", "[oidc]") {
    fake_issuer network;
    network.publish({&first_key()});
    auto cache = network.cache();
    auto key = cache.key_for(std::string(issuer), "first");
    REQUIRE(key);
    CHECK((*key)->key_id == "first");
    CHECK(network.requested == std::vector<std::string>{"https://ci.example/.well-known/openid-configuration",
                                                         "https://ci.example/keys"});
    REQUIRE(cache.key_for(std::string(issuer), "first"));
    CHECK(network.fetches() == 2);
    CHECK(cache.stats().fetched == 1);
}

TEST_CASE("key_cache: an unknown kid fetches again at most once a minute", "[oidc]") {
    fake_issuer network;
    network.publish({&first_key()});
    auto cache = network.cache();
    REQUIRE(cache.key_for(std::string(issuer), "first"));
    network.now += 61s;
    // The issuer rotated: the new key is found by fetching again.
    network.publish({&first_key(), &second_key()});
    REQUIRE(cache.key_for(std::string(issuer), "second"));
    CHECK(network.fetches() == 4);
    // A flood of made-up kids within the minute costs the issuer nothing more.
    for (int i = 0; i < 100; ++i) {
        auto refused = cache.key_for(std::string(issuer), "made-up-" + std::to_string(i));
        REQUIRE_FALSE(refused);
        CHECK(refused.error().kind == error_kind::invalid);
        CHECK_THAT(refused.error().message, Catch::Contains("does not publish") && Catch::Contains("'first', 'second'"));
    }
    CHECK(network.fetches() == 4);
    CHECK(cache.wait_before_fetch(std::string(issuer)) == 60s);
    network.now += 60s;
    CHECK(cache.wait_before_fetch(std::string(issuer)) == 0s);
    CHECK_FALSE(cache.key_for(std::string(issuer), "made-up-again"));
    CHECK(network.fetches() == 6);
}

TEST_CASE("key_cache: the issuer down: known keys keep working, none known is unavailable", "[oidc]") {
    fake_issuer network;
    network.publish({&first_key()});
    auto cache = network.cache({.refresh_interval = 60s, .max_age = 3600s});
    REQUIRE(cache.key_for(std::string(issuer), "first"));
    network.go_down();
    network.now += 7200s;  // past max_age: fetched again, which fails, and the stale key serves
    auto stale = cache.key_for(std::string(issuer), "first");
    REQUIRE(stale);
    CHECK(cache.stats().failed == 1);
    // A kid the cache lacks while the issuer is down may be a new key: unavailable, not refused.
    network.now += 61s;
    auto unknown = cache.key_for(std::string(issuer), "second");
    REQUIRE_FALSE(unknown);
    CHECK(unknown.error().kind == error_kind::unavailable);
    CHECK_THAT(unknown.error().message, Catch::Contains("cannot be fetched now; retry in 60 s") &&
                                            Catch::Contains("connect timed out"));

    fake_issuer dark;
    auto empty = dark.cache();
    auto nothing = empty.key_for(std::string(issuer), "first");
    REQUIRE_FALSE(nothing);
    CHECK(nothing.error().kind == error_kind::unavailable);
    CHECK_THAT(nothing.error().message, Catch::Contains("answered HTTP 404"));
}

TEST_CASE("key_cache: a bad document keeps the keys already known", "[oidc]") {
    fake_issuer network;
    network.publish({&first_key()});
    auto cache = network.cache();
    REQUIRE(cache.key_for(std::string(issuer), "first"));
    {
        std::lock_guard lock(network.mutex);
        network.answers.insert_or_assign("https://ci.example/keys", body(R"({"keys": []})"));  // an empty set is no rotation
    }
    network.now += 61s;
    auto unknown = cache.key_for(std::string(issuer), "second");
    REQUIRE_FALSE(unknown);
    CHECK_THAT(unknown.error().message, Catch::Contains("holds no RSA"));
    REQUIRE(cache.key_for(std::string(issuer), "first"));
}

TEST_CASE("key_cache: a pinned key set is never fetched", "[oidc]") {
    fake_issuer network;
    auto cache = network.cache();
    auto pinned = oidc::parse_key_set(key_set_json({&first_key()}));
    REQUIRE(pinned);
    cache.pin(std::string(issuer), std::move(*pinned));
    REQUIRE(cache.key_for(std::string(issuer), "first"));
    network.now += 100'000s;
    REQUIRE(cache.key_for(std::string(issuer), "first"));
    auto unknown = cache.key_for(std::string(issuer), "second");
    REQUIRE_FALSE(unknown);
    CHECK(unknown.error().kind == error_kind::invalid);
    CHECK_THAT(unknown.error().message, Catch::Contains("pinned"));
    CHECK(network.fetches() == 0);
}

TEST_CASE("key_cache: requests for one issuer share one fetch", "[oidc]") {
    fake_issuer network;
    network.publish({&first_key()});
    std::atomic<int> fetching{0};
    std::atomic<int> most{0};
    oidc::key_cache cache(
        [&](const std::string& url, std::size_t) -> result<std::string> {
            const int now = ++fetching;
            most = std::max(most.load(), now);
            std::this_thread::sleep_for(20ms);
            --fetching;
            std::lock_guard lock(network.mutex);
            network.requested.push_back(url);
            return network.answers.at(url);
        },
        {});
    std::vector<std::thread> threads;
    std::atomic<int> found{0};
    for (int i = 0; i < 8; ++i) {
        threads.emplace_back([&] { found += cache.key_for(std::string(issuer), "first") ? 1 : 0; });
    }
    for (auto& thread : threads) thread.join();
    CHECK(found == 8);
    CHECK(most == 1);
    CHECK(network.fetches() == 2);
}
