#include "wheelhouse/s3/signature_v4.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <ctime>

#include "wheelhouse/crypto/hasher.hpp"
#include "wheelhouse/crypto/hmac.hpp"

namespace wheelhouse::s3 {
namespace {

constexpr std::string_view algorithm = "AWS4-HMAC-SHA256";
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
        const bool unreserved = (byte >= 'A' && byte <= 'Z') || (byte >= 'a' && byte <= 'z') ||
                                (byte >= '0' && byte <= '9') || c == '-' || c == '.' || c == '_' || c == '~';
        if (unreserved || (c == '/' && keep_slash)) {
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

signer::signer(credentials who, std::string region) : who_(std::move(who)), region_(std::move(region)) {}

signer::~signer() = default;

std::shared_ptr<const crypto::hmac_sha256_key> signer::key_of(std::string_view date) const {
    {
        const std::lock_guard lock(mutex_);
        if (latest_date_ == date) return latest_key_;
    }
    const auto day = crypto::hmac_sha256_key("AWS4" + who_.secret_access_key).mac(date);
    const auto in_region = crypto::hmac_sha256_key(crypto::as_text(day)).mac(region_);
    const auto service = crypto::hmac_sha256_key(crypto::as_text(in_region)).mac("s3");
    const auto key = crypto::hmac_sha256_key(crypto::as_text(service)).mac("aws4_request");
    auto made = std::make_shared<const crypto::hmac_sha256_key>(crypto::as_text(key));
    const std::lock_guard lock(mutex_);
    // Near midnight, threads may ask for two days: the later one is kept.
    if (latest_date_.empty() || date > latest_date_) latest_date_ = date, latest_key_ = made;
    return made;
}

std::string signer::signature(std::string_view date_time, std::string_view scope_text,
                              std::string_view canonical) const {
    const std::string to_sign = std::string(algorithm) + "\n" + std::string(date_time) + "\n" +
                                std::string(scope_text) + "\n" + crypto::sha256_hex(canonical);
    return crypto::hasher::to_hex(key_of(date_time.substr(0, 8))->mac(to_sign));
}

name_value_list signer::sign_headers(const request_line& line, const name_value_list& headers,
                                     std::string_view payload_sha256,
                                     std::chrono::system_clock::time_point now) const {
    const scope at = scope_of(now, region_);
    name_value_list added{{"x-amz-date", at.date_time}, {"x-amz-content-sha256", std::string(payload_sha256)}};
    if (!who_.session_token.empty()) added.emplace_back("x-amz-security-token", who_.session_token);

    name_value_list signed_headers = headers;
    signed_headers.emplace_back("host", std::string(line.host));
    signed_headers.insert(signed_headers.end(), added.begin(), added.end());
    const auto [canonical, names] = canonical_request(line, std::move(signed_headers), payload_sha256);
    added.emplace_back("authorization", std::string(algorithm) + " Credential=" + who_.access_key_id + "/" +
                                            at.text + ", SignedHeaders=" + names +
                                            ", Signature=" + signature(at.date_time, at.text, canonical));
    return added;
}

std::string signer::presign_query(const request_line& line, std::chrono::system_clock::time_point now,
                                  std::chrono::seconds expires) const {
    const scope at = scope_of(now, region_);
    request_line presigned = line;
    presigned.query.emplace_back("X-Amz-Algorithm", std::string(algorithm));
    presigned.query.emplace_back("X-Amz-Credential", who_.access_key_id + "/" + at.text);
    presigned.query.emplace_back("X-Amz-Date", at.date_time);
    presigned.query.emplace_back("X-Amz-Expires", std::to_string(expires.count()));
    presigned.query.emplace_back("X-Amz-SignedHeaders", "host");
    if (!who_.session_token.empty()) presigned.query.emplace_back("X-Amz-Security-Token", who_.session_token);
    const auto [canonical, names] =
        canonical_request(presigned, {{"host", std::string(line.host)}}, unsigned_payload);
    return canonical_query(presigned.query) + "&X-Amz-Signature=" + signature(at.date_time, at.text, canonical);
}

}  // namespace wheelhouse::s3
