#pragma once
// The live sessions, so a drain can close the idle ones and wait for the busy ones, and so the
// connection cap can make room for a new connection: a session that only drops a refused body
// (lingering) or waits for a request (idle) gives way before a new client is refused.

#include <cstddef>
#include <list>
#include <memory>
#include <chrono>
#include <mutex>
#include <unordered_map>

#include "wheelhouse/transport/net.hpp"

namespace wheelhouse::transport {

class http_session;

// Thread safety: every member may be called from any thread.
class session_registry {
public:
    // What a session is doing, as far as the connection cap cares.
    enum class activity {
        busy,       // reading a request or answering it: never closed to make room
        idle,       // waiting for a request, nothing of it read yet
        lingering,  // reading and dropping what the client still sends of a refused body
    };

private:
    struct entry {
        std::weak_ptr<http_session> session;
        net::ip::address peer;  // its address_share key
        activity now = activity::busy;
        bool giving_way = false;  // asked to close for a new connection: no longer counted
        bool may_answer = false;  // picked while idle: answers a request found arriving, then closes
    };
    using entry_list = std::list<entry>;

public:
    using handle = entry_list::iterator;

    // Counts a new session in, busy. `peer` is the client's address.
    handle add(const std::shared_ptr<http_session>& session, const net::ip::address& peer);
    void remove(handle session);
    void set_activity(handle session, activity now);

    // Sessions open, those giving way included: a drain waits for them all.
    std::size_t size() const;
    // Sessions that count against the connection cap: open and not giving way.
    std::size_t counted() const;
    // Of those, the ones from `peer`'s share (address_share).
    std::size_t counted_from(const net::ip::address& peer) const;

    // Makes room under the cap for one new connection: asks the session lingering longest, else
    // the one idle longest, to close (http_session::give_way), and stops counting it at once.
    // A lingering one only drops bytes, and closes at once. One picked while idle answers a
    // request that arrived meanwhile before it closes, so it stays open: at most
    // `most_giving_way` of those at once, or a burst of new connections would each make room and
    // the open ones outgrow the cap. False when every session is busy, or none lingers and that
    // many picked while idle are still answering.
    bool make_room(std::size_t most_giving_way);

    // Asks every session to finish its current request and close.
    void drain_all();

    // Held by a listener from its look at the counts to its add(): every I/O thread admits
    // connections, and the cap would otherwise let each of them in on the same last place.
    [[nodiscard]] std::unique_lock<std::mutex> hold_admission() { return std::unique_lock(admission_); }

    // Since the last warning, for every listener together: connections refused (all busy; past a
    // client's share), and connections closed to make room. Read and written under hold_admission().
    struct refusal_tally {
        std::size_t refused_busy = 0;
        std::size_t refused_over_share = 0;
        std::size_t made_room = 0;
        std::chrono::steady_clock::time_point last_warning{};
    };
    refusal_tally& tally() noexcept { return tally_; }

private:
    entry_list& list_of(activity now);
    void uncount(entry& session);

    std::mutex admission_;  // before mutex_ when both are held
    refusal_tally tally_;
    mutable std::mutex mutex_;
    // Each session is in the list of its activity, in the order it took it up: oldest first.
    entry_list busy_;
    entry_list idle_;
    entry_list lingering_;
    std::size_t giving_way_ = 0;
    std::size_t may_answer_ = 0;  // of those giving way, the ones picked while idle
    std::unordered_map<net::ip::address, std::size_t> counted_by_peer_;
};

// What one client's share of the connections is counted by: an IPv4 address (an IPv4-mapped
// IPv6 one as IPv4), or an IPv6 address's /64, which is one host's or one site's network (RFC 6177):
// a client that holds a /64 has as many addresses as it likes inside it.
net::ip::address address_share(const net::ip::address& peer);

}  // namespace wheelhouse::transport
