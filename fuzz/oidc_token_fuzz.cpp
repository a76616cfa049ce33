// CI identity tokens (oidc/jwt, oidc/signature; text/json_object, text/base64). The input is a
// token as POST /_/oidc/mint-token receives it. Beside memory safety:
// - a refusal says why in printable ASCII (what it quotes is escaped);
// - an accepted token is canonical: each part re-encodes to itself, the signing input is the
//   first two parts as sent, the algorithm is on the fixed list and a key id is named;
// - a token past max_token_bytes is refused by its length, before any decoding (so the cost of a
//   token is bounded whatever is sent; doubling a long input changes nothing);
// - a signature of the accepted token's signing input by the harness's own P-256 key verifies
//   under ES256 once turned from r||s into DER, and with one bit changed it does not; a
//   signature of the wrong length is refused by its length.

#include <openssl/ec.h>
#include <openssl/ecdsa.h>
#include <openssl/evp.h>
#include <openssl/obj_mac.h>

#include <algorithm>
#include <memory>
#include <string>

#include "fuzz_support.hpp"
#include "wheelhouse/oidc/signature.hpp"
#include "wheelhouse/text/base64.hpp"

namespace {

namespace oidc = wheelhouse::oidc;
namespace text = wheelhouse::text;

bool printable(const std::string& message) {
    return !message.empty() &&
           std::all_of(message.begin(), message.end(), [](char c) { return c == '\n' || (c >= 0x20 && c < 0x7F); });
}

// The harness's signing key and its public half as a verification key.
struct signer {
    std::shared_ptr<EVP_PKEY> pair;
    oidc::verification_key key;
};

const signer& fixed_signer() {
    static const signer made = [] {
        EVP_PKEY* generated = EVP_EC_gen("P-256");
        signer out{std::shared_ptr<EVP_PKEY>(generated, EVP_PKEY_free), {}};
        out.key.key_id = "fuzz";
        out.key.type = oidc::key_type::ec_p256;
        out.key.key = out.pair;  // OpenSSL verifies with a key pair's public half
        return out;
    }();
    return made;
}

// ES256 as JWS writes it: r || s, 32 bytes each.
std::string sign_es256(std::string_view input) {
    std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> context(EVP_MD_CTX_new(), EVP_MD_CTX_free);
    EVP_DigestSignInit(context.get(), nullptr, EVP_sha256(), nullptr, fixed_signer().pair.get());
    std::size_t length = 0;
    EVP_DigestSign(context.get(), nullptr, &length, reinterpret_cast<const unsigned char*>(input.data()), input.size());
    std::string der(length, '\0');
    EVP_DigestSign(context.get(), reinterpret_cast<unsigned char*>(der.data()), &length,
                   reinterpret_cast<const unsigned char*>(input.data()), input.size());
    const auto* cursor = reinterpret_cast<const unsigned char*>(der.data());
    std::unique_ptr<ECDSA_SIG, decltype(&ECDSA_SIG_free)> signature(
        d2i_ECDSA_SIG(nullptr, &cursor, static_cast<long>(length)), ECDSA_SIG_free);
    std::string raw(64, '\0');
    BN_bn2binpad(ECDSA_SIG_get0_r(signature.get()), reinterpret_cast<unsigned char*>(raw.data()), 32);
    BN_bn2binpad(ECDSA_SIG_get0_s(signature.get()), reinterpret_cast<unsigned char*>(raw.data()) + 32, 32);
    return raw;
}

void check_accepted(std::string_view token, const oidc::unverified_token& parsed) {
    const auto first = token.find('.');
    const auto second = token.find('.', first + 1);
    WHEELHOUSE_FUZZ_CHECK(parsed.signing_input == token.substr(0, second), std::string(token));
    for (const auto part : {token.substr(0, first), token.substr(first + 1, second - first - 1), token.substr(second + 1)}) {
        const auto bytes = text::base64url_decode(part);
        WHEELHOUSE_FUZZ_CHECK(bytes && text::base64url_encode(*bytes) == part, std::string(part) + " is not canonical");
    }
    WHEELHOUSE_FUZZ_CHECK(oidc::algorithm_named(oidc::name_of(parsed.alg)) == parsed.alg && !parsed.key_id.empty(),
                          std::string(token));

    const auto& key = fixed_signer().key;
    auto signature = sign_es256(parsed.signing_input);
    WHEELHOUSE_FUZZ_CHECK(oidc::check_signature(oidc::algorithm::es256, key, parsed.signing_input, signature),
                          std::string(token) + ": the harness's own signature does not verify");
    signature[parsed.signature.size() % signature.size()] ^= 0x01;
    WHEELHOUSE_FUZZ_CHECK(!oidc::check_signature(oidc::algorithm::es256, key, parsed.signing_input, signature),
                          std::string(token) + ": a changed signature verifies");
    if (parsed.signature.size() != 64) {
        auto refused = oidc::check_signature(oidc::algorithm::es256, key, parsed.signing_input, parsed.signature);
        WHEELHOUSE_FUZZ_CHECK(!refused && refused.error().message.find("bytes") != std::string::npos, std::string(token));
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const auto token = wheelhouse::fuzz::as_text(data, size);
    auto parsed = oidc::parse_token(token);
    if (!parsed) {
        WHEELHOUSE_FUZZ_CHECK(printable(parsed.error().message), std::string(token) + " -> " + parsed.error().message);
        if (token.size() > oidc::max_token_bytes)
            WHEELHOUSE_FUZZ_CHECK(parsed.error().message.find(" bytes") != std::string::npos, parsed.error().message);
        return 0;
    }
    WHEELHOUSE_FUZZ_CHECK(token.size() <= oidc::max_token_bytes, std::string(token));
    check_accepted(token, *parsed);
    return 0;
}
