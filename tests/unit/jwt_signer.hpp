#pragma once
// An identity-token issuer for the tests of the OIDC verifier: RSA and P-256 key pairs made with
// OpenSSL, their public halves as a JWK set, and tokens signed with either. Header and claims
// are given as JSON text, so a test can write anything a hostile issuer or client would.

#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/ecdsa.h>
#include <openssl/evp.h>
#include <openssl/rsa.h>

#include <memory>
#include <string>
#include <string_view>

#include <boost/json.hpp>

#include "wheelhouse/text/base64.hpp"

namespace wheelhouse::testing {

struct signing_key {
    std::shared_ptr<EVP_PKEY> pair;
    std::string key_id;
    bool ec = false;

    static signing_key rsa(std::string key_id, unsigned bits = 2048) {
        return {std::shared_ptr<EVP_PKEY>(EVP_RSA_gen(bits), EVP_PKEY_free), std::move(key_id), false};
    }
    static signing_key p256(std::string key_id) {
        return {std::shared_ptr<EVP_PKEY>(EVP_EC_gen("P-256"), EVP_PKEY_free), std::move(key_id), true};
    }

    // The public half as a JWK.
    boost::json::object jwk() const {
        if (!ec) {
            return {{"kty", "RSA"}, {"kid", key_id}, {"use", "sig"}, {"n", number(OSSL_PKEY_PARAM_RSA_N)},
                    {"e", number(OSSL_PKEY_PARAM_RSA_E)}};
        }
        unsigned char point[65];
        std::size_t length = 0;
        EVP_PKEY_get_octet_string_param(pair.get(), OSSL_PKEY_PARAM_PUB_KEY, point, sizeof point, &length);
        const std::string_view bytes(reinterpret_cast<const char*>(point), length);
        return {{"kty", "EC"}, {"kid", key_id}, {"crv", "P-256"}, {"x", text::base64url_encode(bytes.substr(1, 32))},
                {"y", text::base64url_encode(bytes.substr(33, 32))}};
    }

    // The raw signature of `input`: PKCS #1 v1.5 with SHA-256 for RSA, r || s for P-256.
    std::string sign(std::string_view input) const {
        std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> context(EVP_MD_CTX_new(), EVP_MD_CTX_free);
        EVP_DigestSignInit(context.get(), nullptr, EVP_sha256(), nullptr, pair.get());
        std::size_t length = 0;
        const auto* data = reinterpret_cast<const unsigned char*>(input.data());
        EVP_DigestSign(context.get(), nullptr, &length, data, input.size());
        std::string signature(length, '\0');
        EVP_DigestSign(context.get(), reinterpret_cast<unsigned char*>(signature.data()), &length, data, input.size());
        signature.resize(length);
        if (!ec) return signature;
        const auto* cursor = reinterpret_cast<const unsigned char*>(signature.data());
        std::unique_ptr<ECDSA_SIG, decltype(&ECDSA_SIG_free)> parsed(
            d2i_ECDSA_SIG(nullptr, &cursor, static_cast<long>(signature.size())), ECDSA_SIG_free);
        std::string raw(64, '\0');
        BN_bn2binpad(ECDSA_SIG_get0_r(parsed.get()), reinterpret_cast<unsigned char*>(raw.data()), 32);
        BN_bn2binpad(ECDSA_SIG_get0_s(parsed.get()), reinterpret_cast<unsigned char*>(raw.data()) + 32, 32);
        return raw;
    }

private:
    std::string number(const char* name) const {
        BIGNUM* value = nullptr;
        EVP_PKEY_get_bn_param(pair.get(), name, &value);
        std::string bytes(static_cast<std::size_t>(BN_num_bytes(value)), '\0');
        BN_bn2bin(value, reinterpret_cast<unsigned char*>(bytes.data()));
        BN_free(value);
        return text::base64url_encode(bytes);
    }
};

inline std::string key_set_json(std::initializer_list<const signing_key*> keys) {
    boost::json::array list;
    for (const auto* key : keys) list.push_back(key->jwk());
    return boost::json::serialize(boost::json::object{{"keys", std::move(list)}});
}

// header.payload.signature, the header and claims written as given.
inline std::string signed_token(const signing_key& key, std::string_view header_json, std::string_view claims_json) {
    const std::string input = text::base64url_encode(header_json) + "." + text::base64url_encode(claims_json);
    return input + "." + text::base64url_encode(key.sign(input));
}

// A token with the usual header for `key` ({"alg": RS256 or ES256, "kid", "typ": "JWT"}).
inline std::string signed_token(const signing_key& key, const boost::json::object& claims) {
    const boost::json::object header{{"alg", key.ec ? "ES256" : "RS256"}, {"kid", key.key_id}, {"typ", "JWT"}};
    return signed_token(key, boost::json::serialize(header), boost::json::serialize(claims));
}

}  // namespace wheelhouse::testing
