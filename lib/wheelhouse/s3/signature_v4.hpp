#pragma once
// AWS Signature Version 4 as S3 and its look-alikes (Ceph radosgw, MinIO) check it: the signed
// headers of a request, and the query of a presigned URL. Pure computation: the caller sends.
// The rules (docs.aws.amazon.com, "Signature Version 4 signing process"): every name and value
// percent-encoded once, unreserved characters kept, '/' kept in the path only; headers lower-case
// and sorted; the key derived by HMAC-SHA256 from the secret, the day, the region and "s3".

#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace wheelhouse::crypto {
class hmac_sha256_key;
}

namespace wheelhouse::s3 {

// Never logged or shown: only the access key id appears in what is sent.
struct credentials {
    std::string access_key_id;
    std::string secret_access_key;
    std::string session_token;  // temporary credentials only; empty otherwise
};

using name_value_list = std::vector<std::pair<std::string, std::string>>;

// What SigV4 covers of a request line.
struct request_line {
    std::string_view method;  // "GET", "PUT", ...
    std::string_view host;    // the Host header's value: name, or name:port when not the scheme's
    std::string_view path;    // decoded, starting with '/': "/bucket/key"
    name_value_list query;    // decoded names and values, in any order ("uploads" has "")
};

// The hex SHA-256 S3 accepts in place of the payload's when the body is not hashed first.
inline constexpr std::string_view unsigned_payload = "UNSIGNED-PAYLOAD";

// Percent-encodes as SigV4 does: A-Z a-z 0-9 - . _ ~ kept, every other byte %XX (upper case);
// '/' kept only when `keep_slash` (paths), so a key is encoded the same here and on the wire.
std::string uri_encode(std::string_view text, bool keep_slash);

// The query as signed and as sent: each name and value encoded, sorted by name then value.
std::string canonical_query(const name_value_list& query);

// "path?query" with the path encoded, as it goes on the request line (no '?' when no query).
std::string request_target(const request_line& line);

// 20261128T160509Z: the x-amz-date of `when`.
std::string amz_date(std::chrono::system_clock::time_point when);

// Signs for one key pair in one region. The key SigV4 derives from the secret (four HMACs) is
// the same all day: it is derived once a day, so a presigned URL costs one SHA-256 and one HMAC.
// Shared by every thread of a server.
class signer {
public:
    signer(credentials who, std::string region);
    signer(const signer& other) : signer(other.who_, other.region_) {}
    signer& operator=(const signer&) = delete;
    ~signer();

    // The headers to add to a request whose other signed headers are `headers` (any case; Host is
    // added from `line`): x-amz-date, x-amz-content-sha256 (`payload_sha256`), x-amz-security-token
    // when the credentials have one, and Authorization. Names in lower case.
    name_value_list sign_headers(const request_line& line, const name_value_list& headers,
                                 std::string_view payload_sha256, std::chrono::system_clock::time_point now) const;

    // The query (without '?') of a presigned URL for `line`: its own query plus the X-Amz-*
    // parameters, signing the Host header alone, valid `expires` from `now` (S3 takes 1 s to 7 days).
    std::string presign_query(const request_line& line, std::chrono::system_clock::time_point now,
                              std::chrono::seconds expires) const;

    const credentials& who() const noexcept { return who_; }
    const std::string& region() const noexcept { return region_; }

private:
    // The signing key of `date` (YYYYMMDD).
    std::shared_ptr<const crypto::hmac_sha256_key> key_of(std::string_view date) const;
    std::string signature(std::string_view date_time, std::string_view scope, std::string_view canonical) const;

    credentials who_;
    std::string region_;
    mutable std::mutex mutex_;  // guards the two below: the last day asked for and its key
    mutable std::string latest_date_;
    mutable std::shared_ptr<const crypto::hmac_sha256_key> latest_key_;
};

}  // namespace wheelhouse::s3
