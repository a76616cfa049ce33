#pragma once
// A response body that another thread produces while the session writes it (a download
// proxied from a remote host). The session pulls what is ready; when nothing is, it asks to be
// woken and waits without blocking its I/O thread. A failure ends the connection before the
// body is complete, so the client never takes short or wrong bytes for a whole response.

#include <cstddef>
#include <functional>
#include <string_view>

namespace wheelhouse::transport {

class body_source {
public:
    enum class state {
        ready,     // `bytes` can be written now
        pending,   // nothing yet: call on_ready()
        finished,  // every byte has been handed out
        failed,    // the body cannot be completed: end the connection
    };
    struct piece {
        state what = state::pending;
        std::string_view bytes;  // for state::ready; valid until consume()
    };

    virtual ~body_source() = default;

    // Thread safety: the session's I/O thread, one call at a time.
    virtual piece next() = 0;
    // The first `bytes` of the last ready piece were written.
    virtual void consume(std::size_t bytes) = 0;
    // Calls `wake` once, from any thread (at once when something is ready already), when
    // next() has more than `pending` to say. Replaces a wake not yet called.
    virtual void on_ready(std::function<void()> wake) = 0;
    // The client went away or the session closes: stop producing and drop the wake.
    // Thread safety: any thread; idempotent.
    virtual void cancel() noexcept = 0;
};

}  // namespace wheelhouse::transport
