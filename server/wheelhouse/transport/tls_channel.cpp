#include "wheelhouse/transport/tls_channel.hpp"

#include <array>
#include <cerrno>
#include <cstring>

#include <openssl/err.h>

namespace wheelhouse::transport {

tls_channel::tls_channel(SSL* ssl, int fd) : ssl_(ssl) {
    SSL_set_fd(ssl_, fd);
    SSL_set_accept_state(ssl_);
}

tls_channel::~tls_channel() { SSL_free(ssl_); }

tls_channel::step tls_channel::outcome_of(int result) {
    if (result > 0) return {outcome::done, static_cast<std::size_t>(result)};
    const int error = SSL_get_error(ssl_, result);
    switch (error) {
        case SSL_ERROR_WANT_READ: return {outcome::want_read};
        case SSL_ERROR_WANT_WRITE: return {outcome::want_write};
        case SSL_ERROR_ZERO_RETURN: return {outcome::closed};
        default: break;
    }
    broken_ = true;
    const auto code = ERR_peek_last_error();
    if (ERR_GET_LIB(code) == ERR_LIB_SSL && ERR_GET_REASON(code) == SSL_R_HTTP_REQUEST) plain_http_ = true;
    if (error == SSL_ERROR_SYSCALL && code == 0) {
        // The connection ended under OpenSSL (a reset, or EOF where IGNORE_UNEXPECTED_EOF does not reach).
        reason_ = errno != 0 ? std::strerror(errno) : "the connection closed";
        ERR_clear_error();
        return {outcome::closed};
    }
    std::array<char, 256> text{};
    ERR_error_string_n(code, text.data(), text.size());
    reason_ = code != 0 ? text.data() : "TLS error " + std::to_string(error);
    ERR_clear_error();
    return {outcome::failed};
}

tls_channel::step tls_channel::handshake() {
    ERR_clear_error();
    const int result = SSL_do_handshake(ssl_);
    return result == 1 ? step{outcome::done} : outcome_of(result);
}

tls_channel::step tls_channel::read(void* into, std::size_t size) {
    ERR_clear_error();
    std::size_t got = 0;
    const int result = SSL_read_ex(ssl_, into, size, &got);
    return result == 1 ? step{outcome::done, got} : outcome_of(result);
}

tls_channel::step tls_channel::write(const void* from, std::size_t size) {
    ERR_clear_error();
    std::size_t sent = 0;
    const int result = SSL_write_ex(ssl_, from, size, &sent);
    return result == 1 ? step{outcome::done, sent} : outcome_of(result);
}

tls_channel::step tls_channel::send_file(int file, std::uint64_t offset, std::size_t size) {
    ERR_clear_error();
    const auto sent = SSL_sendfile(ssl_, file, static_cast<off_t>(offset), size, 0);
    if (sent > 0) return {outcome::done, static_cast<std::size_t>(sent)};
    return outcome_of(static_cast<int>(sent));
}

bool tls_channel::kernel_sends() const { return BIO_get_ktls_send(SSL_get_wbio(ssl_)) != 0; }

void tls_channel::close_notify() noexcept {
    if (broken_ || !SSL_is_init_finished(ssl_)) return;
    broken_ = true;  // once
    ERR_clear_error();
    SSL_shutdown(ssl_);
    ERR_clear_error();
}

}  // namespace wheelhouse::transport
