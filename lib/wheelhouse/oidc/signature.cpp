#include "wheelhouse/oidc/signature.hpp"

#include <openssl/ecdsa.h>
#include <openssl/err.h>
#include <openssl/evp.h>

#include <memory>

#include "wheelhouse/text/quoted.hpp"

namespace wheelhouse::oidc {
namespace {

struct digest_context_deleter {
    void operator()(EVP_MD_CTX* context) const noexcept { EVP_MD_CTX_free(context); }
};
struct ecdsa_signature_deleter {
    void operator()(ECDSA_SIG* signature) const noexcept { ECDSA_SIG_free(signature); }
};

const EVP_MD* digest_of(algorithm alg) {
    switch (alg) {
        case algorithm::rs256:
        case algorithm::es256: return EVP_sha256();
        case algorithm::rs384:
        case algorithm::es384: return EVP_sha384();
        case algorithm::rs512: return EVP_sha512();
    }
    return nullptr;
}

error refused(std::string reason) { return invalid("the identity token's signature " + std::move(reason)); }

// r || s, each `size` bytes big-endian, as the DER SEQUENCE OpenSSL's ECDSA verification reads.
result<std::string> der_of(std::string_view raw, std::size_t size) {
    if (raw.size() != 2 * size) {
        return refused("is " + std::to_string(raw.size()) + " bytes; an ECDSA signature in a JWS is r and s of " +
                       std::to_string(size) + " bytes each");
    }
    const auto* bytes = reinterpret_cast<const unsigned char*>(raw.data());
    std::unique_ptr<ECDSA_SIG, ecdsa_signature_deleter> signature(ECDSA_SIG_new());
    BIGNUM* r = BN_bin2bn(bytes, static_cast<int>(size), nullptr);
    BIGNUM* s = BN_bin2bn(bytes + size, static_cast<int>(size), nullptr);
    if (!signature || r == nullptr || s == nullptr || ECDSA_SIG_set0(signature.get(), r, s) != 1) {
        BN_free(r);
        BN_free(s);
        return make_error(error_kind::internal, "OpenSSL could not hold an ECDSA signature");
    }
    unsigned char* der = nullptr;
    const int length = i2d_ECDSA_SIG(signature.get(), &der);
    if (length <= 0) return make_error(error_kind::internal, "OpenSSL could not encode an ECDSA signature");
    std::string encoded(reinterpret_cast<const char*>(der), static_cast<std::size_t>(length));
    OPENSSL_free(der);
    return encoded;
}

}  // namespace

result<void> check_signature(algorithm alg, const verification_key& key, std::string_view signing_input,
                             std::string_view signature) {
    const auto key_name = text::quoted(key.key_id, 60);
    if (!fits(key.type, alg)) return refused("uses " + std::string(name_of(alg)) + ", which the issuer's key " + key_name + " cannot check");
    if (key.alg && *key.alg != alg) {
        return refused("uses " + std::string(name_of(alg)) + ", but the issuer published key " + key_name + " for " +
                       std::string(name_of(*key.alg)));
    }
    std::string der;
    if (key.type != key_type::rsa) {
        auto converted = der_of(signature, key.type == key_type::ec_p256 ? 32 : 48);
        if (!converted) return converted.error();
        der = std::move(*converted);
        signature = der;
    }
    std::unique_ptr<EVP_MD_CTX, digest_context_deleter> context(EVP_MD_CTX_new());
    // The RSA padding is OpenSSL's default for RSA keys: PKCS #1 v1.5, as RS* requires.
    if (!context || EVP_DigestVerifyInit(context.get(), nullptr, digest_of(alg), nullptr, key.key.get()) != 1) {
        ERR_clear_error();
        return make_error(error_kind::internal, "OpenSSL could not start a signature check");
    }
    const int verified = EVP_DigestVerify(context.get(), reinterpret_cast<const unsigned char*>(signature.data()),
                                          signature.size(), reinterpret_cast<const unsigned char*>(signing_input.data()),
                                          signing_input.size());
    ERR_clear_error();  // a refused signature leaves OpenSSL's per-thread queue for TLS on this thread to misread
    if (verified != 1) return refused("does not verify with the issuer's key " + key_name);
    return {};
}

}  // namespace wheelhouse::oidc
