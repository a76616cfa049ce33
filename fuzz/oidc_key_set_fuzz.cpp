// An issuer's JWK set and discovery document (oidc/jwk; text/json_object). The input is the body
// an issuer (or the host it names) answers. Beside memory safety:
// - a refusal says why in printable ASCII (what it quotes is escaped);
// - an accepted key set holds 1 to max_keys keys, each with a distinct non-empty kid, an OpenSSL
//   key, and an "alg" (when it names one) its type can use; RSA keys are within the bits allowed;
// - a discovery document is accepted only when it names exactly the issuer, and then its key set
//   URI is https:// on the issuer's own host and port;
// - a body past max_key_set_bytes is refused by its length, before it is parsed.

#include <openssl/evp.h>

#include <algorithm>
#include <set>
#include <string>

#include "fuzz_support.hpp"
#include "wheelhouse/oidc/jwk.hpp"

namespace {

namespace oidc = wheelhouse::oidc;

bool printable(const std::string& message) {
    return !message.empty() &&
           std::all_of(message.begin(), message.end(), [](char c) { return c == '\n' || (c >= 0x20 && c < 0x7F); });
}

void check_key_set(std::string_view text) {
    auto parsed = oidc::parse_key_set(text);
    if (!parsed) {
        WHEELHOUSE_FUZZ_CHECK(printable(parsed.error().message), std::string(text) + " -> " + parsed.error().message);
        if (text.size() > oidc::max_key_set_bytes)
            WHEELHOUSE_FUZZ_CHECK(parsed.error().message.find(" bytes") != std::string::npos, parsed.error().message);
        return;
    }
    WHEELHOUSE_FUZZ_CHECK(!parsed->keys.empty() && parsed->keys.size() <= oidc::max_keys, std::string(text));
    std::set<std::string> ids;
    for (const auto& key : parsed->keys) {
        WHEELHOUSE_FUZZ_CHECK(!key->key_id.empty() && ids.insert(key->key_id).second && key->key, std::string(text));
        WHEELHOUSE_FUZZ_CHECK(!key->alg || oidc::fits(key->type, *key->alg), std::string(text));
        if (key->type == oidc::key_type::rsa) {
            const auto bits = static_cast<unsigned>(EVP_PKEY_get_bits(key->key.get()));
            WHEELHOUSE_FUZZ_CHECK(bits >= oidc::min_rsa_bits && bits <= oidc::max_rsa_bits, std::string(text));
        }
        WHEELHOUSE_FUZZ_CHECK(parsed->find(key->key_id) == key, key->key_id);
    }
}

void check_discovery(std::string_view text) {
    constexpr std::string_view issuer = "https://token.actions.githubusercontent.com";
    auto uri = oidc::jwks_uri_of(text, issuer);
    if (!uri) {
        WHEELHOUSE_FUZZ_CHECK(printable(uri.error().message), std::string(text) + " -> " + uri.error().message);
        return;
    }
    WHEELHOUSE_FUZZ_CHECK(text.find(R"("issuer")") != std::string_view::npos, std::string(text));
    // The issuer's scheme and host (any case), then the end or a path, query or fragment.
    const bool same_host = uri->size() >= issuer.size() &&
                           std::equal(issuer.begin(), issuer.end(), uri->begin(), [](char a, char b) {
                               return a == (b >= 'A' && b <= 'Z' ? static_cast<char>(b - 'A' + 'a') : b);
                           }) &&
                           (uri->size() == issuer.size() || std::string_view("/?#").find((*uri)[issuer.size()]) !=
                                                                std::string_view::npos);
    WHEELHOUSE_FUZZ_CHECK(same_host, *uri);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const auto text = wheelhouse::fuzz::as_text(data, size);
    check_key_set(text);
    check_discovery(text);
    return 0;
}
