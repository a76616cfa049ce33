#pragma once
// The signing keys of each issuer, as Warehouse keeps them (warehouse/oidc/services.py): fetched
// from the issuer's discovery document and the JWK set it names, kept in memory, and fetched again
// when a token names a key not in the set, at most once a refresh interval per issuer, so a flood
// of made-up key ids costs the issuer one request a minute. Keys older than max_age are fetched
// again before use, and kept when that fails: an issuer that is down does not stop publishing
// while its keys are known. An issuer may instead be pinned to a key set read from a file (an
// air-gapped index), and is then never fetched.
//
// No sockets here: the caller's fetcher does the GET (server/…/oidc_key_fetcher.hpp runs it
// through the outbound HTTPS client). One fetch per issuer at a time; other requests for that
// issuer wait for it rather than fetch again.
//
// Thread safety: every member may be called from any thread. key_for() blocks while it fetches:
// call it from a worker of the outbound lane, never from an I/O thread.

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

#include "wheelhouse/oidc/jwk.hpp"
#include "wheelhouse/result.hpp"

namespace wheelhouse::oidc {

class key_cache {
public:
    struct options {
        std::chrono::seconds refresh_interval{60};  // at most one fetch per issuer within it
        std::chrono::seconds max_age{3600};         // known keys are fetched again after it (kept on failure)
    };
    // GETs an https:// URL: the body of a 200 of at most `max_bytes`; any other answer is an error
    // (upstream, timeout, or invalid for a URL the host policy refuses).
    using fetcher = std::function<result<std::string>(const std::string& url, std::size_t max_bytes)>;
    using clock = std::function<std::chrono::steady_clock::time_point()>;

    key_cache(fetcher fetch, options settings, clock now = &std::chrono::steady_clock::now);

    // `issuer`'s keys are `keys`, from now on and without fetching.
    void pin(const std::string& issuer, key_set keys);

    // The key `key_id` of `issuer`. `invalid` when the issuer's (fresh or pinned) key set has no
    // such key; `unavailable` when no key set could be had (the issuer down, and nothing cached;
    // or a new key id while the issuer is down); the message says which, and why.
    result<std::shared_ptr<const verification_key>> key_for(const std::string& issuer, std::string_view key_id);

    // Seconds until `issuer` may be fetched again (0 when it may be now): a 503's Retry-After.
    std::chrono::seconds wait_before_fetch(const std::string& issuer) const;

    struct statistics {
        std::uint64_t fetched = 0;  // key sets fetched and read
        std::uint64_t failed = 0;   // fetches that failed (the issuer down, a bad document)
    };
    statistics stats() const noexcept;

private:
    struct issuer_keys {
        std::optional<key_set> keys;
        bool pinned = false;
        std::chrono::steady_clock::time_point fetched_at{};
        std::optional<std::chrono::steady_clock::time_point> last_attempt;
        std::string last_failure;  // why the last fetch failed; empty after a success
        bool fetching = false;
    };

    result<key_set> fetch_keys(const std::string& issuer) const;
    bool may_fetch(const issuer_keys& entry, std::chrono::steady_clock::time_point now) const;
    // After the fetches allowed: the key, or why there is none. Under mutex_.
    result<std::shared_ptr<const verification_key>> answer(const std::string& issuer, const issuer_keys& entry,
                                                           std::string_view key_id,
                                                           std::chrono::steady_clock::time_point now) const;

    fetcher fetch_;
    options options_;
    clock now_;
    mutable std::mutex mutex_;
    std::condition_variable fetched_;
    std::map<std::string, issuer_keys, std::less<>> issuers_;
    std::atomic<std::uint64_t> fetched_count_{0};
    std::atomic<std::uint64_t> failed_count_{0};
};

}  // namespace wheelhouse::oidc
