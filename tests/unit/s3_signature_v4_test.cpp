#include <catch2/catch.hpp>

#include <chrono>
#include <string>

#include "wheelhouse/s3/signature_v4.hpp"

using namespace wheelhouse;
using s3::name_value_list;

namespace {

std::chrono::system_clock::time_point utc(int year, unsigned month, unsigned day, int h, int m, int s) {
    using namespace std::chrono;
    return sys_days{std::chrono::year{year} / month / day} + hours{h} + minutes{m} + seconds{s};
}

std::string header(const name_value_list& headers, std::string_view name) {
    for (const auto& [key, value] : headers)
        if (key == name) return value;
    return "(absent)";
}

const s3::credentials aws_example{"AKIAIOSFODNN7EXAMPLE", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", ""};
const s3::credentials plain{"WHTESTKEY1234567890", "s3cr3t/KEY+with=chars", ""};
const s3::credentials temporary{"ASIATEMP", "tempsecret", "session/token+1=="};
constexpr std::string_view empty_sha256 = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

}  // namespace

TEST_CASE("s3: the signed GET of the S3 documentation's example", "[s3]") {
    // docs.aws.amazon.com/AmazonS3/latest/API/sig-v4-header-based-auth.html, "GET Object".
    const s3::request_line line{"GET", "examplebucket.s3.amazonaws.com", "/test.txt", {}};
    const auto added = s3::signer(aws_example, "us-east-1").sign_headers(line, {{"Range", "bytes=0-9"}}, empty_sha256,
                                        utc(2013, 5, 24, 0, 0, 0));
    CHECK(header(added, "x-amz-date") == "20130524T000000Z");
    CHECK(header(added, "authorization") ==
          "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request, "
          "SignedHeaders=host;range;x-amz-content-sha256;x-amz-date, "
          "Signature=f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41");
    CHECK(header(added, "x-amz-security-token") == "(absent)");
}

TEST_CASE("s3: the presigned URL of the S3 documentation's example", "[s3]") {
    // docs.aws.amazon.com/AmazonS3/latest/API/sigv4-query-string-auth.html
    const s3::request_line line{"GET", "examplebucket.s3.amazonaws.com", "/test.txt", {}};
    CHECK(s3::signer(aws_example, "us-east-1").presign_query(line, utc(2013, 5, 24, 0, 0, 0), std::chrono::hours(24)) ==
          "X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AKIAIOSFODNN7EXAMPLE%2F20130524%2Fus-east-1%2Fs3%2F"
          "aws4_request&X-Amz-Date=20130524T000000Z&X-Amz-Expires=86400&X-Amz-SignedHeaders=host"
          "&X-Amz-Signature=aeeed9bbccd4d02ee5c0109b86d86835f995330da4c265957d157751f604d404");
}

// Signatures botocore 1.43 (S3SigV4Auth, S3SigV4QueryAuth) computed for the same requests at
// 2026-11-28T16:05:09Z: path-style addressing with a port, keys and queries that need encoding,
// a session token, and the multipart calls. (botocore lists a presigned URL's parameters in
// another order; the signature covers them sorted, so it is the same.)
TEST_CASE("s3: signatures agree with botocore's", "[s3]") {
    const auto now = utc(2026, 11, 28, 16, 5, 9);
    struct row {
        s3::request_line line;
        name_value_list headers;
        std::string_view payload;
        const s3::credentials* who;
        std::string_view region;
        std::string_view names;
        std::string_view signature;
    };
    const row table[] = {
        {{"PUT", "127.0.0.1:7480", "/wheels/pre/sha256/ab/cd/abcd1234", {}},
         {{"Content-Length", "11"}},
         "b94d27b9934d3e08a52e52d7da7dabfac484efe37a5380ee9088f7ace2efcde9", &plain, "us-east-1",
         "content-length;host;x-amz-content-sha256;x-amz-date",
         "71c9ec2ee55359d7c2f5e446f4e782b198ae19233bdd2a795773a354a3bbf187"},
        {{"GET", "127.0.0.1:7480", "/wheels",
          {{"list-type", "2"}, {"prefix", "pre/sha256/"}, {"continuation-token", "a+b="}}},
         {}, empty_sha256, &plain, "default", "host;x-amz-content-sha256;x-amz-date",
         "c1b5028db6dd403b71113ab63c435afb015fae78140e95d53c90652facfae98f"},
        {{"POST", "s3.example.com:9000", "/wheels/key with space~x", {{"uploads", ""}}},
         {}, empty_sha256, &temporary, "eu-west-3", "host;x-amz-content-sha256;x-amz-date;x-amz-security-token",
         "e95159bd9c6421f95c700e2c533c76fbe75707a27ca858a7bfb9f419487185f3"},
        {{"PUT", "127.0.0.1:7480", "/wheels/k", {{"uploadId", "2~abc.DEF-ghi"}, {"partNumber", "2"}}},
         {{"Content-Length", "5"}}, "d887db09649dab0d83951d8d5d69b2e7d8bb70e79daa2a3a279b4fd6b8346cea", &plain,
         "us-east-1",
         "content-length;host;x-amz-content-sha256;x-amz-date",
         "ac5e70894b046360c04554f552836afe34dfad5f44cac57798b848b4bdf5efce"},
    };
    for (const auto& r : table) {
        const auto added = s3::signer(*r.who, std::string(r.region)).sign_headers(r.line, r.headers, r.payload, now);
        INFO(r.line.method << " " << s3::request_target(r.line));
        const std::string expected = "AWS4-HMAC-SHA256 Credential=" + r.who->access_key_id + "/20261128/" +
                                     std::string(r.region) + "/s3/aws4_request, SignedHeaders=" +
                                     std::string(r.names) + ", Signature=" + std::string(r.signature);
        CHECK(header(added, "authorization") == expected);
        CHECK(header(added, "x-amz-content-sha256") == r.payload);
    }
    CHECK(s3::signer(plain, "us-east-1")
              .presign_query({"GET", "127.0.0.1:7480", "/wheels/pre/sha256/ab/cd/abcd1234", {}}, now,
                             std::chrono::seconds(300)) ==
          "X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=WHTESTKEY1234567890%2F20261128%2Fus-east-1%2Fs3%2F"
          "aws4_request&X-Amz-Date=20261128T160509Z&X-Amz-Expires=300&X-Amz-SignedHeaders=host"
          "&X-Amz-Signature=b8d4f00f8804a3661ed97c26ed09d1828ff81bebda33c2172027009cb05e2ad3");
    CHECK(s3::signer(temporary, "eu-west-3")
              .presign_query({"GET", "s3.example.com", "/wheels/a/b+c.whl", {}}, now, std::chrono::seconds(60)) ==
          "X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=ASIATEMP%2F20261128%2Feu-west-3%2Fs3%2Faws4_request"
          "&X-Amz-Date=20261128T160509Z&X-Amz-Expires=60&X-Amz-Security-Token=session%2Ftoken%2B1%3D%3D"
          "&X-Amz-SignedHeaders=host"
          "&X-Amz-Signature=fc7eb74a8d79b9202acd8f9680ca8aa6d35bf476e8742f95525259a5c181861a");
}

TEST_CASE("s3: paths and queries are encoded once, as on the wire", "[s3]") {
    CHECK(s3::uri_encode("a/b c+d~e_f.g-h%", true) == "a/b%20c%2Bd~e_f.g-h%25");
    CHECK(s3::uri_encode("a/b", false) == "a%2Fb");
    CHECK(s3::uri_encode("\xc3\xa9", true) == "%C3%A9");
    CHECK(s3::request_target({"POST", "h", "/b/k", {{"uploads", ""}}}) == "/b/k?uploads=");
    CHECK(s3::request_target({"GET", "h", "/b", {{"prefix", "x/"}, {"list-type", "2"}}}) ==
          "/b?list-type=2&prefix=x%2F");
    CHECK(s3::request_target({"GET", "h", "/b/k", {}}) == "/b/k");
}

TEST_CASE("s3: one signer keeps each day's key apart, back and forth across midnight", "[s3]") {
    // The key is derived once a day and kept: a signer asked for another day, or an earlier one
    // again (a thread that read the clock before midnight), signs as a new signer would.
    const s3::signer shared(plain, "us-east-1");
    const s3::request_line line{"GET", "127.0.0.1:7480", "/wheels/k", {}};
    for (const auto when : {utc(2026, 11, 28, 23, 59, 59), utc(2026, 11, 29, 0, 0, 0), utc(2026, 11, 28, 23, 59, 59),
                            utc(2026, 11, 29, 0, 0, 1), utc(2026, 12, 1, 12, 0, 0)}) {
        CHECK(shared.presign_query(line, when, std::chrono::seconds(60)) ==
              s3::signer(plain, "us-east-1").presign_query(line, when, std::chrono::seconds(60)));
        CHECK(shared.sign_headers(line, {}, empty_sha256, when) ==
              s3::signer(plain, "us-east-1").sign_headers(line, {}, empty_sha256, when));
    }
    CHECK(shared.presign_query(line, utc(2026, 11, 28, 1, 0, 0), std::chrono::seconds(60)) !=
          shared.presign_query(line, utc(2026, 11, 29, 1, 0, 0), std::chrono::seconds(60)));
}
