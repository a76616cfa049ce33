// Authorization headers and base64 (auth/credentials, text/base64). The input is a header
// value. Beside memory safety:
// - base64 round trips: decode(encode(x)) == x for the input's bytes, and text that decodes
//   encodes back to itself (padding restored), so each value has one accepted spelling;
// - "Basic base64(__token__:T)" and "Bearer T" present exactly T;
// - a refusal never repeats the credentials, neither as sent nor decoded, in the client's
//   message or the log's reason.

#include <openssl/evp.h>

#include <algorithm>
#include <string>

#include "fuzz_support.hpp"
#include "wheelhouse/auth/credentials.hpp"
#include "wheelhouse/text/base64.hpp"

namespace {

namespace auth = wheelhouse::auth;
namespace text = wheelhouse::text;

// Standard base64 as clients write it, by OpenSSL's encoder: the server only decodes it.
std::string base64_encode(std::string_view bytes) {
    std::string out(4 * ((bytes.size() + 2) / 3) + 1, '\0');
    const int length = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                                       reinterpret_cast<const unsigned char*>(bytes.data()), static_cast<int>(bytes.size()));
    out.resize(static_cast<std::size_t>(length));
    return out;
}

void check_base64(std::string_view bytes) {
    const std::string encoded = base64_encode(bytes);
    const auto decoded = text::base64_decode(encoded);
    WHEELHOUSE_FUZZ_CHECK(decoded && *decoded == bytes, encoded);
    if (auto decoded_text = text::base64_decode(bytes)) {
        std::string padded(bytes);
        while (padded.size() % 4 != 0) padded += '=';
        WHEELHOUSE_FUZZ_CHECK(base64_encode(*decoded_text) == padded, std::string(bytes) + " is not canonical");
    }
    const std::string url = text::base64url_encode(bytes);
    WHEELHOUSE_FUZZ_CHECK(url.find_first_of("+/=") == std::string::npos, url);
}

// Every refusal's own words, from one header down each path: a "secret" that is a piece of them
// ("als not valid base64") is the message's text, not a repetition of what was sent.
const std::string& refusal_vocabulary() {
    static const std::string words = [] {
        std::string all;
        const std::string headers[] = {"", "Bearer", "Bearer a b", "Digest x", "Basic", "Basic !!!!",
                                       "Basic " + base64_encode("no-colon"), "Basic " + base64_encode("user:pw1"),
                                       "Basic " + base64_encode("__token__:")};
        for (const auto& header : headers) {
            const auto reading = auth::read_authorization(header);
            if (!reading.token) all += reading.token.error().message + "\n" + std::string(reading.refusal) + "\n";
        }
        return all;
    }();
    return words;
}

// Whether `message` repeats `secret`. Only secrets with a digit count, as every token has one
// ("pass" or "Basic), or" could be words of a message), and none that the messages say anyway.
bool repeats(std::string_view message, std::string_view secret) {
    const bool digit = std::any_of(secret.begin(), secret.end(), [](char c) { return c >= '0' && c <= '9'; });
    return secret.size() >= 8 && digit && message.find(secret) != std::string_view::npos &&
           refusal_vocabulary().find(secret) == std::string::npos;
}

void check_refusal_is_silent(std::string_view header) {
    const auto reading = auth::read_authorization(header);
    if (reading.token) return;
    WHEELHOUSE_FUZZ_CHECK(!reading.refusal.empty() && !reading.token.error().message.empty(), std::string(header));
    const auto space = header.find_first_of(" \t", header.find_first_not_of(" \t"));
    const std::string_view credentials = space == std::string_view::npos ? header : header.substr(space + 1);
    std::vector<std::string> secrets{std::string(credentials)};
    if (auto decoded = text::base64_decode(credentials)) {
        secrets.push_back(*decoded);
        if (auto colon = decoded->find(':'); colon != std::string::npos) secrets.push_back(decoded->substr(colon + 1));
    }
    for (const auto& secret : secrets) {
        WHEELHOUSE_FUZZ_CHECK(!repeats(reading.token.error().message, secret) && !repeats(reading.refusal, secret),
                              std::string(header) + " -> " + reading.token.error().message);
    }
}

void check_presented(std::string_view token) {
    if (token.empty() || token.find_first_of(" \t") != std::string_view::npos) return;
    const std::string basic = "Basic " + base64_encode("__token__:" + std::string(token));
    auto presented = auth::parse_authorization(basic);
    WHEELHOUSE_FUZZ_CHECK(presented && presented->token == token && presented->scheme == auth::credential_scheme::basic,
                          basic);
    auto bearer = auth::parse_authorization("bearer " + std::string(token));
    WHEELHOUSE_FUZZ_CHECK(bearer && bearer->token == token && bearer->scheme == auth::credential_scheme::bearer,
                          std::string(token));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const auto text = wheelhouse::fuzz::as_text(data, size);
    check_base64(text);
    check_refusal_is_silent(text);
    check_presented(text);
    return 0;
}
