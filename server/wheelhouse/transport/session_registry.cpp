#include "wheelhouse/transport/session_registry.hpp"

#include <vector>

#include "wheelhouse/transport/http_session.hpp"

namespace wheelhouse::transport {

void session_registry::add(const std::shared_ptr<http_session>& session) {
    std::lock_guard lock(mutex_);
    sessions_.emplace(session.get(), session);
}

void session_registry::remove(const http_session* session) {
    std::lock_guard lock(mutex_);
    sessions_.erase(session);
}

std::size_t session_registry::size() const {
    std::lock_guard lock(mutex_);
    return sessions_.size();
}

void session_registry::drain_all() {
    std::vector<std::shared_ptr<http_session>> live;
    {
        std::lock_guard lock(mutex_);
        for (const auto& [key, weak] : sessions_) {
            if (auto session = weak.lock()) live.push_back(std::move(session));
        }
    }
    for (const auto& session : live) session->drain();
}

}  // namespace wheelhouse::transport
