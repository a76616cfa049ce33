#pragma once
// Accepts connections and starts an http_session for each (over TLS when given a certificate), on the I/O contexts in turn, up to
// the connection cap. At the cap a lingering or idle connection gives way to the new one
// (session_registry::make_room); when none can, or past a client's share of the connections,
// the new connection is answered 503 at once and closed.

#include <atomic>
#include <chrono>
#include <string>
#include <memory>
#include <vector>

#include "wheelhouse/result.hpp"
#include "wheelhouse/transport/access_log.hpp"
#include "wheelhouse/transport/net.hpp"
#include "wheelhouse/transport/request_handler.hpp"
#include "wheelhouse/transport/session_limits.hpp"
#include "wheelhouse/transport/session_registry.hpp"
#include "wheelhouse/transport/tls_certificate.hpp"

namespace wheelhouse::transport {

class listener : public std::enable_shared_from_this<listener> {
public:
    // Accepts on `context`; each connection goes to the next of `session_contexts` in turn.
    // `tls`: the certificate HTTPS presents; null for plain HTTP.
    listener(net::io_context& context, std::vector<net::io_context*> session_contexts, request_handler& handler,
             std::shared_ptr<const tls_certificate> tls, const session_limits& limits, session_registry& registry,
             access_log& log);

    // Binds and listens; the error says which address could not be taken and why.
    result<void> open(const tcp::endpoint& endpoint);
    // Accepts from `first`'s listening socket too, on this listener's own context: whichever
    // thread is free takes the next connection, as nginx's workers do, instead of one thread
    // accepting for every other (its handshakes then held theirs back).
    result<void> share(listener& first);
    tcp::endpoint local_endpoint() const;

    // Thread safety: run() once after open(); stop() from any thread.
    void run();
    void stop();
    // True once stop() has closed the acceptor: connections still queued in the kernel are
    // refused from then on. Thread safety: any thread.
    bool stopped() const noexcept { return stopped_.load(); }

private:
    void do_accept();
    void on_accept(error_code ec, tcp::socket socket);
    void back_off(error_code ec);
    // A 503 serialised once, with its body and (for a HEAD) without.
    struct refusal {
        std::string with_body;
        std::string head_only;
    };
    static refusal service_unavailable(const std::string& message);
    // Starts a session for `socket`, making room for it at the cap, or refuses it.
    void admit(tcp::socket& socket);
    void refuse(tcp::socket& socket, const refusal& answer);
    void warn_now_and_then();

    std::vector<net::io_context*> session_contexts_;
    std::size_t next_context_ = 0;
    std::shared_ptr<const tls_certificate> tls_;
    tcp::acceptor acceptor_;
    net::steady_timer retry_timer_;
    request_handler& handler_;
    const session_limits& limits_;
    session_registry& registry_;
    access_log& log_;
    refusal busy_;      // the 503 past the cap
    refusal over_share_;  // the 503 past a client's share
    bool accept_failing_ = false;
    std::atomic<bool> stopped_{false};
};

}  // namespace wheelhouse::transport
