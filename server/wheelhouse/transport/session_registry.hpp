#pragma once
// The live sessions, so a drain can close the idle ones and wait for the busy ones.

#include <cstddef>
#include <memory>
#include <mutex>
#include <unordered_map>

namespace wheelhouse::transport {

class http_session;

// Thread safety: every member may be called from any thread.
class session_registry {
public:
    void add(const std::shared_ptr<http_session>& session);
    void remove(const http_session* session);
    std::size_t size() const;

    // Asks every session to finish its current request and close.
    void drain_all();

private:
    mutable std::mutex mutex_;
    std::unordered_map<const http_session*, std::weak_ptr<http_session>> sessions_;
};

}  // namespace wheelhouse::transport
