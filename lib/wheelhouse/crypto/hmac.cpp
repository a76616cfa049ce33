#include "wheelhouse/crypto/hmac.hpp"

#include <openssl/core_names.h>
#include <openssl/evp.h>

#include <new>

namespace wheelhouse::crypto {
namespace {

// Fetched once for the process: OpenSSL 3 looks an algorithm up by name on every implicit use.
EVP_MAC* hmac_method() {
    static EVP_MAC* const method = EVP_MAC_fetch(nullptr, OSSL_MAC_NAME_HMAC, nullptr);
    return method;
}

EVP_MAC_CTX* keyed(std::string_view key) {
    char digest_name[] = OSSL_DIGEST_NAME_SHA2_256;
    const OSSL_PARAM parameters[] = {
        OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, digest_name, 0), OSSL_PARAM_construct_end()};
    EVP_MAC_CTX* context = hmac_method() == nullptr ? nullptr : EVP_MAC_CTX_new(hmac_method());
    if (context != nullptr &&
        EVP_MAC_init(context, reinterpret_cast<const unsigned char*>(key.data()), key.size(), parameters) != 1) {
        EVP_MAC_CTX_free(context);
        return nullptr;
    }
    return context;
}

}  // namespace

bool hmac_sha256_available() {
    EVP_MAC_CTX* context = keyed("probe");
    EVP_MAC_CTX_free(context);
    return context != nullptr;
}

hmac_sha256_key::hmac_sha256_key(std::string_view key) : ready_(keyed(key)) {
    if (ready_ == nullptr) throw std::bad_alloc();
}

hmac_sha256_key::~hmac_sha256_key() { EVP_MAC_CTX_free(ready_); }

sha256_digest hmac_sha256_key::mac(std::string_view data) const {
    sha256_digest out{};
    EVP_MAC_CTX* context = EVP_MAC_CTX_dup(ready_);
    if (context == nullptr) throw std::bad_alloc();
    std::size_t length = 0;
    EVP_MAC_update(context, reinterpret_cast<const unsigned char*>(data.data()), data.size());
    EVP_MAC_final(context, out.data(), &length, out.size());
    EVP_MAC_CTX_free(context);
    return out;
}

}  // namespace wheelhouse::crypto
