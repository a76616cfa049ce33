#include "wheelhouse/transport/session_registry.hpp"

#include <vector>

#include "wheelhouse/transport/http_session.hpp"

namespace wheelhouse::transport {

net::ip::address address_share(const net::ip::address& peer) {
    if (peer.is_v4()) return peer;
    const auto v6 = peer.to_v6();
    if (v6.is_v4_mapped()) return net::ip::make_address_v4(net::ip::v4_mapped, v6);
    auto bytes = v6.to_bytes();
    std::fill(bytes.begin() + 8, bytes.end(), 0);
    return net::ip::address_v6(bytes);
}

session_registry::handle session_registry::add(const std::shared_ptr<http_session>& session,
                                               const net::ip::address& peer) {
    const auto share = address_share(peer);
    std::lock_guard lock(mutex_);
    busy_.push_back(entry{session, share});
    ++counted_by_peer_[share];
    return std::prev(busy_.end());
}

void session_registry::remove(handle session) {
    std::lock_guard lock(mutex_);
    if (session->giving_way) {
        --giving_way_;
        if (session->may_answer) --may_answer_;
    } else {
        uncount(*session);
    }
    list_of(session->now).erase(session);
}

void session_registry::set_activity(handle session, activity now) {
    std::lock_guard lock(mutex_);
    if (session->giving_way || session->now == now) return;  // one giving way stays where it is
    auto& from = list_of(session->now);
    session->now = now;
    auto& to = list_of(now);
    to.splice(to.end(), from, session);  // no allocation; the handle stays valid
}

std::size_t session_registry::size() const {
    std::lock_guard lock(mutex_);
    return busy_.size() + idle_.size() + lingering_.size();
}

std::size_t session_registry::counted() const {
    std::lock_guard lock(mutex_);
    return busy_.size() + idle_.size() + lingering_.size() - giving_way_;
}

std::size_t session_registry::counted_from(const net::ip::address& peer) const {
    std::lock_guard lock(mutex_);
    const auto found = counted_by_peer_.find(address_share(peer));
    return found == counted_by_peer_.end() ? 0 : found->second;
}

bool session_registry::make_room(std::size_t most_giving_way) {
    std::shared_ptr<http_session> leaving;
    {
        std::lock_guard lock(mutex_);
        const bool from_idle = lingering_.empty();
        auto& from = from_idle ? idle_ : lingering_;
        if (from.empty() || (from_idle && may_answer_ >= most_giving_way)) return false;
        const auto oldest = from.begin();
        uncount(*oldest);
        oldest->giving_way = true;
        ++giving_way_;
        oldest->may_answer = from_idle;
        if (from_idle) ++may_answer_;
        oldest->now = activity::busy;
        busy_.splice(busy_.end(), from, oldest);
        leaving = oldest->session.lock();  // null when it is closing already: room either way
    }
    if (leaving) leaving->give_way();
    return true;
}

void session_registry::drain_all() {
    std::vector<std::shared_ptr<http_session>> live;
    {
        std::lock_guard lock(mutex_);
        for (const auto* list : {&busy_, &idle_, &lingering_}) {
            for (const auto& session : *list) {
                if (auto alive = session.session.lock()) live.push_back(std::move(alive));
            }
        }
    }
    for (const auto& session : live) session->drain();
}

session_registry::entry_list& session_registry::list_of(activity now) {
    switch (now) {
        case activity::idle: return idle_;
        case activity::lingering: return lingering_;
        case activity::busy: break;
    }
    return busy_;
}

void session_registry::uncount(entry& session) {
    const auto found = counted_by_peer_.find(session.peer);
    if (found != counted_by_peer_.end() && --found->second == 0) counted_by_peer_.erase(found);
}

}  // namespace wheelhouse::transport
