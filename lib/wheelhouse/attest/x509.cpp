#include "wheelhouse/attest/x509.hpp"

#include <openssl/asn1.h>
#include <openssl/bio.h>
#include <openssl/core_names.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/obj_mac.h>
#include <openssl/objects.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

namespace wheelhouse::attest {
namespace {

const unsigned char* bytes_of(std::string_view text) { return reinterpret_cast<const unsigned char*>(text.data()); }

std::shared_ptr<X509> owned(X509* certificate) { return {certificate, X509_free}; }

}  // namespace

std::shared_ptr<X509> parse_certificate(std::string_view der) {
    const unsigned char* at = bytes_of(der);
    auto certificate = owned(d2i_X509(nullptr, &at, static_cast<long>(der.size())));
    ERR_clear_error();
    if (!certificate || at != bytes_of(der) + der.size()) return nullptr;
    return certificate;
}

std::shared_ptr<X509> parse_pem_certificate(std::string_view pem) {
    std::unique_ptr<BIO, decltype(&BIO_free)> source(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())),
                                                     BIO_free);
    if (!source) return nullptr;
    auto certificate = owned(PEM_read_bio_X509(source.get(), nullptr, nullptr, nullptr));
    // Exactly one: a second certificate after the first would go unchecked.
    const bool more = certificate && PEM_read_bio_X509(source.get(), nullptr, nullptr, nullptr) != nullptr;
    ERR_clear_error();
    if (!certificate || more) return nullptr;
    return certificate;
}

std::string der_of(const X509& certificate) {
    unsigned char* der = nullptr;
    const int length = i2d_X509(&certificate, &der);
    if (length <= 0) return {};
    std::string encoded(reinterpret_cast<const char*>(der), static_cast<std::size_t>(length));
    OPENSSL_free(der);
    return encoded;
}

std::shared_ptr<EVP_PKEY> parse_public_key(std::string_view der) {
    const unsigned char* at = bytes_of(der);
    std::shared_ptr<EVP_PKEY> key(d2i_PUBKEY(nullptr, &at, static_cast<long>(der.size())), EVP_PKEY_free);
    ERR_clear_error();
    if (!key || at != bytes_of(der) + der.size()) return nullptr;
    return key;
}

std::optional<ec_curve> ec_curve_of(const EVP_PKEY& key) noexcept {
    if (EVP_PKEY_get_base_id(&key) != EVP_PKEY_EC) return std::nullopt;
    char group[64] = {};
    std::size_t length = 0;
    if (EVP_PKEY_get_utf8_string_param(&key, OSSL_PKEY_PARAM_GROUP_NAME, group, sizeof group, &length) != 1) {
        ERR_clear_error();
        return std::nullopt;
    }
    const int nid = OBJ_sn2nid(group);
    if (nid == NID_X9_62_prime256v1) return ec_curve::p256;
    if (nid == NID_secp384r1) return ec_curve::p384;
    return std::nullopt;
}

bool verify_ecdsa(const EVP_PKEY& key, std::string_view message, std::string_view signature) noexcept {
    const auto curve = ec_curve_of(key);
    if (!curve) return false;
    std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> context(EVP_MD_CTX_new(), EVP_MD_CTX_free);
    const EVP_MD* digest = *curve == ec_curve::p256 ? EVP_sha256() : EVP_sha384();
    // EVP_DigestVerifyInit takes a non-const key but only reads it (a reference is kept).
    auto* usable = const_cast<EVP_PKEY*>(&key);
    const bool verified = context && EVP_DigestVerifyInit(context.get(), nullptr, digest, nullptr, usable) == 1 &&
                          EVP_DigestVerify(context.get(), bytes_of(signature), signature.size(), bytes_of(message),
                                           message.size()) == 1;
    ERR_clear_error();
    return verified;
}

std::optional<std::string> utf8_extension(const X509& certificate, std::string_view oid, bool raw) {
    std::unique_ptr<ASN1_OBJECT, decltype(&ASN1_OBJECT_free)> wanted(OBJ_txt2obj(std::string(oid).c_str(), 1),
                                                                       ASN1_OBJECT_free);
    if (!wanted) return std::nullopt;
    const int at = X509_get_ext_by_OBJ(&certificate, wanted.get(), -1);
    if (at < 0 || X509_get_ext_by_OBJ(&certificate, wanted.get(), at) >= 0) return std::nullopt;
    const ASN1_OCTET_STRING* octets = X509_EXTENSION_get_data(X509_get_ext(&certificate, at));
    const std::string_view value(reinterpret_cast<const char*>(ASN1_STRING_get0_data(octets)),
                                 static_cast<std::size_t>(ASN1_STRING_length(octets)));
    if (raw) return std::string(value);
    const unsigned char* in = bytes_of(value);
    std::unique_ptr<ASN1_UTF8STRING, decltype(&ASN1_UTF8STRING_free)> text(
        d2i_ASN1_UTF8STRING(nullptr, &in, static_cast<long>(value.size())), ASN1_UTF8STRING_free);
    ERR_clear_error();
    if (!text || in != bytes_of(value) + value.size()) return std::nullopt;
    return std::string(reinterpret_cast<const char*>(ASN1_STRING_get0_data(text.get())),
                       static_cast<std::size_t>(ASN1_STRING_length(text.get())));
}

}  // namespace wheelhouse::attest
