#include "wheelhouse/oidc/key_cache.hpp"

#include "wheelhouse/error_text.hpp"
#include "wheelhouse/text/quoted.hpp"

namespace wheelhouse::oidc {
namespace {


std::int64_t whole_seconds(std::chrono::steady_clock::duration span) {
    return std::chrono::duration_cast<std::chrono::seconds>(span).count();
}

}  // namespace

key_cache::key_cache(fetcher fetch, options settings, clock now)
    : fetch_(std::move(fetch)), options_(settings), now_(std::move(now)) {}

void key_cache::pin(const std::string& issuer, key_set keys) {
    std::lock_guard lock(mutex_);
    auto& entry = issuers_[issuer];
    entry.keys = std::move(keys);
    entry.pinned = true;
}

bool key_cache::may_fetch(const issuer_keys& entry, std::chrono::steady_clock::time_point now) const {
    return !entry.pinned && (!entry.last_attempt || now - *entry.last_attempt >= options_.refresh_interval);
}

result<key_set> key_cache::fetch_keys(const std::string& issuer) const {
    const auto where = discovery_url(issuer);
    auto document = fetch_(where, max_discovery_bytes);
    if (!document) return make_error(document.error().kind, where + ": " + describe(document.error()));
    auto keys_at = jwks_uri_of(*document, issuer);
    if (!keys_at) return keys_at.error();
    auto body = fetch_(*keys_at, max_key_set_bytes);
    if (!body) return make_error(body.error().kind, *keys_at + ": " + describe(body.error()));
    return parse_key_set(*body);
}

result<std::shared_ptr<const verification_key>> key_cache::key_for(const std::string& issuer, std::string_view key_id) {
    std::unique_lock lock(mutex_);
    auto& entry = issuers_[issuer];
    fetched_.wait(lock, [&] { return !entry.fetching; });  // another request is fetching: use what it gets
    const auto now = now_();
    const auto known = entry.keys ? entry.keys->find(key_id) : nullptr;
    const bool stale = entry.keys && now - entry.fetched_at > options_.max_age;
    if ((known && (!stale || entry.pinned)) || !may_fetch(entry, now)) return answer(issuer, entry, key_id, now);

    entry.fetching = true;
    entry.last_attempt = now;
    lock.unlock();
    auto fetched = fetch_keys(issuer);
    lock.lock();
    entry.fetching = false;
    if (fetched) {
        entry.keys = std::move(*fetched);
        entry.fetched_at = now;
        entry.last_failure.clear();
        fetched_count_.fetch_add(1, std::memory_order_relaxed);
    } else {
        entry.last_failure = describe(fetched.error());
        failed_count_.fetch_add(1, std::memory_order_relaxed);
    }
    fetched_.notify_all();
    return answer(issuer, entry, key_id, now);
}

result<std::shared_ptr<const verification_key>> key_cache::answer(const std::string& issuer, const issuer_keys& entry,
                                                                  std::string_view key_id,
                                                                  std::chrono::steady_clock::time_point now) const {
    if (entry.keys) {
        if (auto key = entry.keys->find(key_id)) return key;  // stale keys serve while the issuer is down
    }
    const auto retry = entry.last_attempt ? whole_seconds(options_.refresh_interval - (now - *entry.last_attempt)) : 0;
    // The last fetch failed: a key id the cached set lacks may be a new key the issuer cannot tell us of.
    if (!entry.pinned && !entry.last_failure.empty()) {
        return make_error(error_kind::unavailable,
                          "the keys of the issuer " + text::quoted(issuer) + " cannot be fetched now; retry in " +
                              std::to_string(std::max<std::int64_t>(retry, 1)) + " s",
                          entry.last_failure);
    }
    if (!entry.keys) {
        return make_error(error_kind::unavailable, "the keys of the issuer " + text::quoted(issuer) +
                                                       " are being fetched; retry in a few seconds");
    }
    std::string where = entry.pinned ? "the key set pinned for it (--oidc-jwks)"
                                     : "its key set, fetched " + std::to_string(whole_seconds(now - entry.fetched_at)) + " s ago";
    return invalid("the identity token names the key " + text::quoted(key_id, 60) + ", which the issuer " + text::quoted(issuer) +
                   " does not publish in " + where + " (keys: " + entry.keys->key_ids() + ")");
}

std::chrono::seconds key_cache::wait_before_fetch(const std::string& issuer) const {
    std::lock_guard lock(mutex_);
    const auto found = issuers_.find(issuer);
    if (found == issuers_.end() || !found->second.last_attempt) return std::chrono::seconds(0);
    const auto left = options_.refresh_interval - (now_() - *found->second.last_attempt);
    return std::max(std::chrono::seconds(0), std::chrono::ceil<std::chrono::seconds>(left));
}

key_cache::statistics key_cache::stats() const noexcept {
    return {fetched_count_.load(std::memory_order_relaxed), failed_count_.load(std::memory_order_relaxed)};
}

}  // namespace wheelhouse::oidc
