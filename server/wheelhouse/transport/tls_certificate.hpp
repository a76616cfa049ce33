#pragma once
// The certificate the server presents over HTTPS, with its key: read once at start, and again
// when the operator asks (SIGHUP, after a renewal). New connections take the context current
// when they are accepted; a connection keeps the one it began with (an SSL holds its SSL_CTX),
// so a reload drops none.

#include <memory>
#include <mutex>
#include <string>

#include <openssl/ssl.h>

#include "wheelhouse/result.hpp"

namespace wheelhouse::transport {

class tls_certificate {
public:
    // `certificate_file`: PEM, the server's certificate first, then its chain; `key_file`: PEM.
    // The error leads with what to fix: an unreadable file, a key that is not the certificate's,
    // a certificate outside its validity period.
    static result<std::shared_ptr<tls_certificate>> load(std::string certificate_file, std::string key_file);

    // Reads both files again; on any failure the current context stays and the error says why.
    // Thread safety: any thread.
    result<void> reload();

    // A new server-side SSL for one accepted connection, from the current context; null when
    // OpenSSL is out of memory. Thread safety: any thread.
    SSL* new_connection() const;

    // "CN=…, valid until …" of the certificate in use, for the log.
    std::string describe() const;

private:
    tls_certificate(std::string certificate_file, std::string key_file);

    const std::string certificate_file_;
    const std::string key_file_;
    mutable std::mutex mutex_;
    std::shared_ptr<SSL_CTX> current_;
    std::string description_;
};

}  // namespace wheelhouse::transport
