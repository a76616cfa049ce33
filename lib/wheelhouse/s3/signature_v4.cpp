#include "wheelhouse/s3/signature_v4.hpp"

#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <ctime>

#include "wheelhouse/crypto/hasher.hpp"

namespace wheelhouse::s3 {
namespace {

constexpr std::string_view algorithm = "AWS4-HMAC-SHA256";
using digest = std::array<unsigned char, 32>;

digest hmac_sha256(std::string_view key, std::string_view data) {
    digest out{};
    unsigned int length = 0;
    HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()), reinterpret_cast<const unsigned char*>(data.data()),
         data.size(), out.data(), &length);
    return out;
}

std::string_view as_text(const digest& bytes) {
    return {reinterpret_cast<const char*>(bytes.data()), bytes.size()};
}

// The date (YYYYMMDD) and the scope "date/region/s3/aws4_request" of a signature.
struct scope {
    std::string date_time;
    std::string date;
    std::string text;
};

scope scope_of(std::chrono::system_clock::time_point now, std::string_view region) {
    scope made{amz_date(now), {}, {}};
    made.date = made.date_time.substr(0, 8);
    made.text = made.date + "/" + std::string(region) + "/s3/aws4_request";
    return made;
}

std::string signature(const credentials& who, const scope& at, std::string_view region, std::string_view canonical) {
    const std::string to_sign = std::string(algorithm) + "\n" + at.date_time + "\n" + at.text + "\n" +
                                crypto::sha256_hex(canonical);
    const digest day = hmac_sha256("AWS4" + who.secret_access_key, at.date);
    const digest in_region = hmac_sha256(as_text(day), region);
    const digest service = hmac_sha256(as_text(in_region), "s3");
    const digest key = hmac_sha256(as_text(service), "aws4_request");
    return crypto::hasher::to_hex(hmac_sha256(as_text(key), to_sign));
}

// A header's value as signed: leading and trailing blanks cut, inner runs of blanks made one.
std::string trimmed(std::string_view value) {
    std::string out;
    bool blank = false;
    for (const char c : value) {
        if (c == ' ' || c == '\t') {
            blank = !out.empty();
            continue;
        }
        if (blank) out += ' ';
        blank = false;
        out += c;
    }
    return out;
}

std::string lower(std::string_view text) {
    std::string out(text);
    std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return out;
}

// "method\npath\nquery\nheaders\n\nsigned names\npayload", and the signed names.
std::pair<std::string, std::string> canonical_request(const request_line& line, name_value_list headers,
                                                      std::string_view payload_sha256) {
    for (auto& [name, value] : headers) {
        name = lower(name);
        value = trimmed(value);
    }
    std::sort(headers.begin(), headers.end());
    std::string listed, names;
    for (const auto& [name, value] : headers) {
        listed += name + ":" + value + "\n";
        names += (names.empty() ? "" : ";") + name;
    }
    std::string canonical = std::string(line.method) + "\n" + uri_encode(line.path, true) + "\n" +
                            canonical_query(line.query) + "\n" + listed + "\n" + names + "\n" +
                            std::string(payload_sha256);
    return {std::move(canonical), std::move(names)};
}

}  // namespace

std::string uri_encode(std::string_view text, bool keep_slash) {
    static constexpr char hex[] = "0123456789ABCDEF";
    std::string out;
    out.reserve(text.size());
    for (const char c : text) {
        const auto byte = static_cast<unsigned char>(c);
        if (std::isalnum(byte) || c == '-' || c == '.' || c == '_' || c == '~' || (c == '/' && keep_slash)) {
            out += c;
        } else {
            out += '%';
            out += hex[byte >> 4];
            out += hex[byte & 0xf];
        }
    }
    return out;
}

std::string canonical_query(const name_value_list& query) {
    name_value_list encoded;
    encoded.reserve(query.size());
    for (const auto& [name, value] : query) encoded.emplace_back(uri_encode(name, false), uri_encode(value, false));
    std::sort(encoded.begin(), encoded.end());
    std::string out;
    for (const auto& [name, value] : encoded) out += (out.empty() ? "" : "&") + name + "=" + value;
    return out;
}

std::string request_target(const request_line& line) {
    std::string target = uri_encode(line.path, true);
    if (!line.query.empty()) target += "?" + canonical_query(line.query);
    return target;
}

std::string amz_date(std::chrono::system_clock::time_point when) {
    const std::time_t seconds = std::chrono::system_clock::to_time_t(when);
    std::tm utc{};
    gmtime_r(&seconds, &utc);
    std::array<char, 17> text{};
    std::strftime(text.data(), text.size(), "%Y%m%dT%H%M%SZ", &utc);
    return text.data();
}

name_value_list sign_headers(const request_line& line, const name_value_list& headers,
                             std::string_view payload_sha256, const credentials& who,
                             std::string_view region, std::chrono::system_clock::time_point now) {
    const scope at = scope_of(now, region);
    name_value_list added{{"x-amz-date", at.date_time}, {"x-amz-content-sha256", std::string(payload_sha256)}};
    if (!who.session_token.empty()) added.emplace_back("x-amz-security-token", who.session_token);

    name_value_list signed_headers = headers;
    signed_headers.emplace_back("host", std::string(line.host));
    signed_headers.insert(signed_headers.end(), added.begin(), added.end());
    const auto [canonical, names] = canonical_request(line, std::move(signed_headers), payload_sha256);
    added.emplace_back("authorization", std::string(algorithm) + " Credential=" + who.access_key_id + "/" + at.text +
                                            ", SignedHeaders=" + names +
                                            ", Signature=" + signature(who, at, region, canonical));
    return added;
}

std::string presign_query(const request_line& line, const credentials& who, std::string_view region,
                          std::chrono::system_clock::time_point now, std::chrono::seconds expires) {
    const scope at = scope_of(now, region);
    request_line presigned = line;
    presigned.query.emplace_back("X-Amz-Algorithm", std::string(algorithm));
    presigned.query.emplace_back("X-Amz-Credential", who.access_key_id + "/" + at.text);
    presigned.query.emplace_back("X-Amz-Date", at.date_time);
    presigned.query.emplace_back("X-Amz-Expires", std::to_string(expires.count()));
    presigned.query.emplace_back("X-Amz-SignedHeaders", "host");
    if (!who.session_token.empty()) presigned.query.emplace_back("X-Amz-Security-Token", who.session_token);
    const auto [canonical, names] =
        canonical_request(presigned, {{"host", std::string(line.host)}}, unsigned_payload);
    return canonical_query(presigned.query) + "&X-Amz-Signature=" + signature(who, at, region, canonical);
}

}  // namespace wheelhouse::s3
