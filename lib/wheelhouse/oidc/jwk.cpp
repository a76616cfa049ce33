#include "wheelhouse/oidc/jwk.hpp"

#include <openssl/core_names.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/param_build.h>

#include <algorithm>

#include <boost/json.hpp>
#include <boost/url/parse.hpp>

#include "wheelhouse/text/ascii.hpp"
#include "wheelhouse/text/base64.hpp"
#include "wheelhouse/text/json_object.hpp"
#include "wheelhouse/text/quoted.hpp"

namespace wheelhouse::oidc {
namespace {

namespace json = boost::json;

template <class Type, void (*release)(Type*)>
struct openssl_deleter {
    void operator()(Type* pointer) const noexcept { release(pointer); }
};
using parameter_builder = std::unique_ptr<OSSL_PARAM_BLD, openssl_deleter<OSSL_PARAM_BLD, OSSL_PARAM_BLD_free>>;
using parameters = std::unique_ptr<OSSL_PARAM, openssl_deleter<OSSL_PARAM, OSSL_PARAM_free>>;
using key_context = std::unique_ptr<EVP_PKEY_CTX, openssl_deleter<EVP_PKEY_CTX, EVP_PKEY_CTX_free>>;
using big_number = std::unique_ptr<BIGNUM, openssl_deleter<BIGNUM, BN_free>>;

error bad_key(std::string_view key_id, std::string reason) {
    return invalid("the issuer's key " + text::quoted(key_id) + " " + std::move(reason));
}

result<std::string> member_bytes(const json::object& jwk, std::string_view key_id, std::string_view name) {
    const auto value = string_claim(jwk, name);
    if (!value) return bad_key(key_id, "has no \"" + std::string(name) + "\"");
    auto bytes = text::base64url_decode(*value);
    if (!bytes || bytes->empty()) return bad_key(key_id, "has a \"" + std::string(name) + "\" that is not base64url");
    return std::move(*bytes);
}

// OpenSSL builds the key from named parameters (OSSL_PARAM_BLD), checks it, and hands it over.
result<std::shared_ptr<EVP_PKEY>> key_from(const char* type, OSSL_PARAM_BLD* built_from, std::string_view key_id) {
    parameters params(OSSL_PARAM_BLD_to_param(built_from));
    key_context context(EVP_PKEY_CTX_new_from_name(nullptr, type, nullptr));
    EVP_PKEY* made = nullptr;
    if (!params || !context || EVP_PKEY_fromdata_init(context.get()) != 1 ||
        EVP_PKEY_fromdata(context.get(), &made, EVP_PKEY_PUBLIC_KEY, params.get()) != 1 || made == nullptr) {
        ERR_clear_error();  // OpenSSL's queue is per thread, and TLS on this thread reads it
        return bad_key(key_id, "is not a valid public key");
    }
    std::shared_ptr<EVP_PKEY> key(made, EVP_PKEY_free);
    // EVP_PKEY_fromdata takes an EC point as given; a point off the curve must be refused.
    key_context check(EVP_PKEY_CTX_new_from_pkey(nullptr, key.get(), nullptr));
    if (!check || EVP_PKEY_public_check(check.get()) != 1) {
        ERR_clear_error();
        return bad_key(key_id, "fails OpenSSL's public-key check");
    }
    return key;
}

result<std::shared_ptr<EVP_PKEY>> rsa_key(const json::object& jwk, std::string_view key_id) {
    auto modulus = member_bytes(jwk, key_id, "n");
    if (!modulus) return modulus.error();
    auto exponent = member_bytes(jwk, key_id, "e");
    if (!exponent) return exponent.error();
    big_number n(BN_bin2bn(reinterpret_cast<const unsigned char*>(modulus->data()), static_cast<int>(modulus->size()), nullptr));
    big_number e(BN_bin2bn(reinterpret_cast<const unsigned char*>(exponent->data()), static_cast<int>(exponent->size()), nullptr));
    if (!n || !e) return make_error(error_kind::internal, "OpenSSL could not read an RSA key's numbers");
    const auto bits = static_cast<unsigned>(BN_num_bits(n.get()));
    if (bits < min_rsa_bits || bits > max_rsa_bits) {
        return bad_key(key_id, "is an RSA key of " + std::to_string(bits) + " bits; " + std::to_string(min_rsa_bits) +
                                   " to " + std::to_string(max_rsa_bits) + " are accepted");
    }
    // A public exponent is odd and at least 3; one of more than 64 bits only makes checks slow.
    if (!BN_is_odd(e.get()) || BN_num_bits(e.get()) < 2 || BN_num_bits(e.get()) > 64)
        return bad_key(key_id, "has an RSA exponent that is even, 1, or longer than 64 bits");
    parameter_builder builder(OSSL_PARAM_BLD_new());
    if (!builder || OSSL_PARAM_BLD_push_BN(builder.get(), OSSL_PKEY_PARAM_RSA_N, n.get()) != 1 ||
        OSSL_PARAM_BLD_push_BN(builder.get(), OSSL_PKEY_PARAM_RSA_E, e.get()) != 1) {
        return make_error(error_kind::internal, "OpenSSL could not build an RSA key");
    }
    return key_from("RSA", builder.get(), key_id);
}

result<std::shared_ptr<EVP_PKEY>> ec_key(const json::object& jwk, std::string_view key_id, key_type type) {
    const std::size_t size = type == key_type::ec_p256 ? 32 : 48;
    auto x = member_bytes(jwk, key_id, "x");
    if (!x) return x.error();
    auto y = member_bytes(jwk, key_id, "y");
    if (!y) return y.error();
    // RFC 7518 section 6.2.1.2: each coordinate is exactly the curve's size, leading zeros kept.
    if (x->size() != size || y->size() != size)
        return bad_key(key_id, "has EC coordinates that are not " + std::to_string(size) + " bytes each");
    const std::string point = '\x04' + *x + *y;  // SEC 1 uncompressed point
    const char* group = type == key_type::ec_p256 ? "prime256v1" : "secp384r1";
    parameter_builder builder(OSSL_PARAM_BLD_new());
    if (!builder || OSSL_PARAM_BLD_push_utf8_string(builder.get(), OSSL_PKEY_PARAM_GROUP_NAME, group, 0) != 1 ||
        OSSL_PARAM_BLD_push_octet_string(builder.get(), OSSL_PKEY_PARAM_PUB_KEY, point.data(), point.size()) != 1) {
        return make_error(error_kind::internal, "OpenSSL could not build an EC key");
    }
    return key_from("EC", builder.get(), key_id);
}

// The key's type from "kty" and "crv"; nullopt for kinds that sign nothing here.
std::optional<key_type> type_of(const json::object& jwk) {
    const auto kty = string_claim(jwk, "kty");
    if (kty == "RSA") return key_type::rsa;
    if (kty != "EC") return std::nullopt;
    const auto crv = string_claim(jwk, "crv");
    if (crv == "P-256") return key_type::ec_p256;
    if (crv == "P-384") return key_type::ec_p384;
    return std::nullopt;
}

// One entry of "keys": a key, nullopt when it is passed over, or why it is refused.
result<std::optional<verification_key>> read_key(const json::value& entry) {
    if (!entry.is_object()) return invalid("the issuer's key set holds an entry that is not a JSON object");
    const auto& jwk = entry.get_object();
    const auto key_id = string_claim(jwk, "kid");
    const auto type = type_of(jwk);
    const auto use = string_claim(jwk, "use");
    if (!key_id || key_id->empty() || !type || (jwk.contains("use") && use != "sig")) return std::optional<verification_key>();
    verification_key key;
    key.key_id = std::string(*key_id);
    key.type = *type;
    if (jwk.contains("alg")) {
        const auto alg = string_claim(jwk, "alg");
        key.alg = alg ? algorithm_named(*alg) : std::nullopt;
        // A key published for another algorithm (or for one not on the list) checks nothing here.
        if (!key.alg) return std::optional<verification_key>();
        if (!fits(key.type, *key.alg)) return bad_key(*key_id, "is published for " + text::quoted(*alg) + ", which its type cannot use");
    }
    auto made = key.type == key_type::rsa ? rsa_key(jwk, *key_id) : ec_key(jwk, *key_id, key.type);
    if (!made) return made.error();
    key.key = std::move(*made);
    return std::optional(std::move(key));
}

}  // namespace

bool fits(key_type type, algorithm alg) noexcept {
    switch (alg) {
        case algorithm::rs256:
        case algorithm::rs384:
        case algorithm::rs512: return type == key_type::rsa;
        case algorithm::es256: return type == key_type::ec_p256;
        case algorithm::es384: return type == key_type::ec_p384;
    }
    return false;
}

std::shared_ptr<const verification_key> key_set::find(std::string_view key_id) const {
    const auto found = std::find_if(keys.begin(), keys.end(), [&](const auto& key) { return key->key_id == key_id; });
    return found == keys.end() ? nullptr : *found;
}

std::string key_set::key_ids() const {
    std::string ids;
    for (const auto& key : keys) ids += (ids.empty() ? "" : ", ") + text::quoted(key->key_id, 40);
    return ids.empty() ? "none" : ids;
}

result<key_set> parse_key_set(std::string_view json_text) {
    if (json_text.size() > max_key_set_bytes)
        return invalid("the issuer's key set is " + std::to_string(json_text.size()) + " bytes; at most " +
                       std::to_string(max_key_set_bytes) + " are read");
    auto document = text::parse_json_object(json_text);
    if (!document) return invalid("the issuer's key set is " + document.error().message);
    const auto* entries = document->if_contains("keys");
    if (entries == nullptr || !entries->is_array()) return invalid("the issuer's key set has no \"keys\" list");
    if (entries->get_array().size() > max_keys)
        return invalid("the issuer's key set lists " + std::to_string(entries->get_array().size()) + " keys; at most " +
                       std::to_string(max_keys) + " are read");
    key_set set;
    for (const auto& entry : entries->get_array()) {
        auto key = read_key(entry);
        if (!key) return key.error();
        if (!*key) continue;
        if (set.find((*key)->key_id))
            return invalid("the issuer's key set has two keys with the id " + text::quoted((*key)->key_id) +
                           "; which one a token means cannot be decided");
        set.keys.push_back(std::make_shared<const verification_key>(std::move(**key)));
    }
    if (set.keys.empty()) return invalid("the issuer's key set holds no RSA, P-256 or P-384 signing key with a \"kid\"");
    return set;
}

std::string discovery_url(std::string_view issuer) {
    while (issuer.ends_with('/')) issuer.remove_suffix(1);
    return std::string(issuer) + "/.well-known/openid-configuration";
}

result<std::string> jwks_uri_of(std::string_view discovery_json, std::string_view issuer) {
    if (discovery_json.size() > max_discovery_bytes)
        return invalid("the issuer's discovery document is larger than " + std::to_string(max_discovery_bytes) + " bytes");
    auto document = text::parse_json_object(discovery_json);
    if (!document) return invalid("the issuer's discovery document is " + document.error().message);
    const auto named = string_claim(*document, "issuer");
    if (named != issuer) {
        return invalid("the discovery document at " + discovery_url(issuer) + " names the issuer " +
                       (named ? text::quoted(*named) : std::string("(none)")) + ", not " + text::quoted(issuer));
    }
    const auto uri = string_claim(*document, "jwks_uri");
    if (!uri) return invalid("the issuer's discovery document has no \"jwks_uri\"");
    const auto keys = boost::urls::parse_uri(*uri);
    const auto home = boost::urls::parse_uri(issuer);
    const bool same_origin = keys && home && keys->scheme() == "https" && home->scheme() == "https" &&
                             !keys->has_userinfo() &&
                             text::to_lower(keys->encoded_host()) == text::to_lower(home->encoded_host()) &&
                             keys->port() == home->port();
    if (!same_origin) {
        return invalid("the issuer's discovery document puts its keys at " + text::quoted(*uri) +
                       ", which is not https:// on the issuer's own host; pin the keys with --oidc-jwks instead");
    }
    return std::string(*uri);
}

}  // namespace wheelhouse::oidc
