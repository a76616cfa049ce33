#pragma once
// TLS on one accepted, non-blocking socket, OpenSSL reading and writing the descriptor itself
// (no memory BIO, so no copy between two buffers, and kernel TLS where the kernel offers it).
// Each call does what it can now and says what it waits for; the session owns every wait,
// deadline and cancellation, exactly as for a plain socket.

#include <cstddef>
#include <cstdint>
#include <string>

#include <openssl/ssl.h>

namespace wheelhouse::transport {

class tls_channel {
public:
    // Takes `ssl` (from tls_certificate::new_connection) and binds it to the socket `fd`.
    tls_channel(SSL* ssl, int fd);
    ~tls_channel();
    tls_channel(const tls_channel&) = delete;
    tls_channel& operator=(const tls_channel&) = delete;

    enum class outcome {
        done,        // `bytes` moved (handshake: finished)
        want_read,   // wait until the socket is readable, then call again with the same arguments
        want_write,  // wait until it is writable, the same
        closed,      // the peer ended TLS (close_notify, or the connection closed)
        failed,      // a protocol error: `reason` says which; the connection is lost
    };
    struct step {
        outcome what = outcome::done;
        std::size_t bytes = 0;
    };

    step handshake();
    step read(void* into, std::size_t size);
    step write(const void* from, std::size_t size);
    // Bytes of `file` at `offset` sent by the kernel (SSL_sendfile): only when kernel_sends().
    step send_file(int file, std::uint64_t offset, std::size_t size);

    // Whether the kernel encrypts what is sent (kTLS on this connection's socket).
    bool kernel_sends() const;
    // The handshake failed because the client spoke plain HTTP to this port.
    bool plain_http_request() const noexcept { return plain_http_; }
    // Why the last call failed, for the debug log.
    const std::string& reason() const noexcept { return reason_; }

    // Sends close_notify if it fits the socket now; never waits (the session closes next).
    void close_notify() noexcept;

private:
    step outcome_of(int result);

    SSL* ssl_;
    std::string reason_;
    bool plain_http_ = false;
    bool broken_ = false;  // after a fatal error OpenSSL must not be asked to shut down
};

}  // namespace wheelhouse::transport
