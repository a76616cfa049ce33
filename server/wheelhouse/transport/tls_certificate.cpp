#include "wheelhouse/transport/tls_certificate.hpp"

#include <array>

#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

namespace wheelhouse::transport {
namespace {

// Mozilla's "intermediate" configuration: TLS 1.2 with forward-secret AEAD suites only, and
// TLS 1.3 with OpenSSL's default suites (all of them AEAD).
constexpr const char* tls12_ciphers =
    "ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256:ECDHE-ECDSA-AES256-GCM-SHA384:"
    "ECDHE-RSA-AES256-GCM-SHA384:ECDHE-ECDSA-CHACHA20-POLY1305:ECDHE-RSA-CHACHA20-POLY1305";
constexpr const char* key_exchange_groups = "X25519:prime256v1:secp384r1";

// The newest OpenSSL error as text, and the queue emptied, so the next failure starts clean.
std::string openssl_reason() {
    std::array<char, 256> text{};
    unsigned long code = 0;
    unsigned long last = 0;
    while ((code = ERR_get_error()) != 0) last = code;
    if (last == 0) return "no reason given by OpenSSL";
    ERR_error_string_n(last, text.data(), text.size());
    return text.data();
}

// RFC 7301: the server picks http/1.1, the one protocol it speaks; a client that offers ALPN
// without it is refused at the handshake rather than misread afterwards.
int select_http11(SSL*, const unsigned char** out, unsigned char* out_length, const unsigned char* offered,
                  unsigned int offered_length, void*) {
    static constexpr unsigned char http11[] = {8, 'h', 't', 't', 'p', '/', '1', '.', '1'};
    unsigned char* selected = nullptr;
    if (SSL_select_next_proto(&selected, out_length, http11, sizeof http11, offered, offered_length) !=
        OPENSSL_NPN_NEGOTIATED)
        return SSL_TLSEXT_ERR_ALERT_FATAL;
    *out = selected;
    return SSL_TLSEXT_ERR_OK;
}

std::string time_text(const ASN1_TIME* time) {
    std::unique_ptr<BIO, decltype(&BIO_free)> out(BIO_new(BIO_s_mem()), &BIO_free);
    if (!out || ASN1_TIME_print(out.get(), time) != 1) return "?";
    char* data = nullptr;
    const auto size = BIO_get_mem_data(out.get(), &data);
    return std::string(data, static_cast<std::size_t>(size));
}

std::string subject_text(const X509* certificate) {
    std::array<char, 256> text{};
    X509_NAME_oneline(X509_get_subject_name(certificate), text.data(), static_cast<int>(text.size()));
    return text.data();
}

// The leaf must be valid now: a server that starts (or reloads) with an expired certificate
// fails every client's handshake, which is worse than not starting.
result<std::string> check_validity(const X509* certificate, const std::string& file) {
    const auto* not_before = X509_get0_notBefore(certificate);
    const auto* not_after = X509_get0_notAfter(certificate);
    if (X509_cmp_current_time(not_after) <= 0)
        return invalid("renew the certificate in " + file + ": it expired " + time_text(not_after));
    if (X509_cmp_current_time(not_before) >= 0)
        return invalid("check the clock, or use another certificate: the one in " + file + " is valid only from " +
                       time_text(not_before));
    return subject_text(certificate) + ", valid until " + time_text(not_after);
}

EVP_PKEY* read_private_key(const std::string& file) {
    const std::unique_ptr<BIO, decltype(&BIO_free)> in(BIO_new_file(file.c_str(), "r"), &BIO_free);
    return in ? PEM_read_bio_PrivateKey(in.get(), nullptr, nullptr, nullptr) : nullptr;
}

struct built_context {
    std::shared_ptr<SSL_CTX> context;
    std::string description;
};

result<built_context> build_context(const std::string& certificate_file, const std::string& key_file) {
    ERR_clear_error();
    std::shared_ptr<SSL_CTX> context(SSL_CTX_new(TLS_server_method()), &SSL_CTX_free);
    if (!context) return make_error(error_kind::internal, "cannot make a TLS context: " + openssl_reason());
    auto* ctx = context.get();
    SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
    SSL_CTX_set_options(ctx, SSL_OP_NO_RENEGOTIATION | SSL_OP_NO_COMPRESSION | SSL_OP_IGNORE_UNEXPECTED_EOF);
    // Partial writes and a moving buffer: the session writes from whatever it has ready and
    // retries with the same bytes after EAGAIN. Idle connections give back their buffers.
    SSL_CTX_set_mode(ctx, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER |
                              SSL_MODE_RELEASE_BUFFERS);
    if (SSL_CTX_set_cipher_list(ctx, tls12_ciphers) != 1 || SSL_CTX_set1_groups_list(ctx, key_exchange_groups) != 1)
        return make_error(error_kind::internal, "cannot set TLS ciphers: " + openssl_reason());
    SSL_CTX_set_alpn_select_cb(ctx, select_http11, nullptr);
    // One TLS 1.3 ticket per handshake rather than OpenSSL's two: each resumed connection is
    // given a fresh one. (The server's session cache stays on for TLS 1.2 clients that resume by
    // session id; tests/e2e/test_hostile_tls.py bounds what it holds.)
    SSL_CTX_set_num_tickets(ctx, 1);
    if (SSL_CTX_use_certificate_chain_file(ctx, certificate_file.c_str()) != 1)
        return invalid("give --tls-cert a readable PEM file, the server's certificate then its chain: " +
                       certificate_file + ": " + openssl_reason());
    const std::unique_ptr<EVP_PKEY, decltype(&EVP_PKEY_free)> key(read_private_key(key_file), &EVP_PKEY_free);
    if (!key) return invalid("give --tls-key a readable PEM private key: " + key_file + ": " + openssl_reason());
    if (SSL_CTX_use_PrivateKey(ctx, key.get()) != 1 || SSL_CTX_check_private_key(ctx) != 1)
        return invalid("give --tls-key the key of the certificate in " + certificate_file + ": " + key_file +
                       " is another key's (" + openssl_reason() + ")");
    auto description = check_validity(SSL_CTX_get0_certificate(ctx), certificate_file);
    if (!description) return description.error();
    return built_context{std::move(context), std::move(*description)};
}

}  // namespace

tls_certificate::tls_certificate(std::string certificate_file, std::string key_file)
    : certificate_file_(std::move(certificate_file)), key_file_(std::move(key_file)) {}

result<std::shared_ptr<tls_certificate>> tls_certificate::load(std::string certificate_file, std::string key_file) {
    std::shared_ptr<tls_certificate> loaded(new tls_certificate(std::move(certificate_file), std::move(key_file)));
    if (auto read = loaded->reload(); !read) return read.error();
    return loaded;
}

result<void> tls_certificate::reload() {
    auto built = build_context(certificate_file_, key_file_);
    if (!built) return built.error();
    const std::lock_guard lock(mutex_);
    current_ = std::move(built->context);
    description_ = std::move(built->description);
    return {};
}

SSL* tls_certificate::new_connection() const {
    std::shared_ptr<SSL_CTX> context;
    {
        const std::lock_guard lock(mutex_);
        context = current_;
    }
    return SSL_new(context.get());  // the SSL holds its own reference to the context
}

std::string tls_certificate::describe() const {
    const std::lock_guard lock(mutex_);
    return description_;
}

}  // namespace wheelhouse::transport
