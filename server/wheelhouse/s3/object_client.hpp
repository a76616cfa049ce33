#pragma once
// A client of one S3-compatible bucket (AWS S3, Ceph radosgw, MinIO): Signature V4 requests over
// Beast, plain HTTP or HTTPS with certificate and host-name checks, path-style addressing
// (https://endpoint/bucket/key), a deadline on every step. Uploads stream from a file and carry
// its sha256 as x-amz-content-sha256, so the store itself refuses bytes that do not match.
// Credentials are never logged nor put in a message; only the access key id is sent.
//
// Thread safety: every member may be called from any number of threads at once; each call
// blocks its thread (a worker or a command line, never an I/O thread) on a connection of its own.

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "wheelhouse/result.hpp"
#include "wheelhouse/s3/signature_v4.hpp"
#include "wheelhouse/s3/xml_answer.hpp"
#include "wheelhouse/storage/object_store.hpp"

namespace wheelhouse::s3 {

struct bucket_settings {
    std::string endpoint;  // http(s)://host[:port], no path
    std::string region = "us-east-1";
    std::string bucket;
    std::string prefix;     // every key begins with it ("wheelhouse/"); may be empty
    std::string ca_bundle;  // a PEM file for https; empty: the system's store
    credentials who;
    std::chrono::milliseconds timeout{std::chrono::seconds(30)};  // each connect, read and write
};

// The access key pair from AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY (and AWS_SESSION_TOKEN),
// or, when `file` is given, from its `aws_access_key_id = ...` lines (the AWS credentials file's
// spelling; its first profile). Never from a command line, where `ps` shows it.
result<credentials> credentials_from(const std::string& file);

// What the store answered an upload: its status, its error code (printable; empty on success),
// and the refusal as put_file() would give it when the status is not 2xx.
struct put_answer {
    unsigned status = 0;
    std::string code;
    std::optional<error> refusal;
};

// One part of a multipart upload: its number (from 1), where it lies in `file`, and its bytes'
// sha256, signed so the store refuses the part should it differ.
struct file_part {
    std::filesystem::path file;
    unsigned number = 0;
    std::uint64_t offset = 0;
    std::uint64_t length = 0;
    std::string sha256;
};

// What a HEAD tells of an object.
struct object_info {
    std::uint64_t size = 0;
    std::string sha256;  // recorded by put_file (x-amz-meta-sha256); empty for objects others wrote
};

class object_client {
public:
    // Checks the endpoint's form and loads the CA bundle; no request is made.
    static result<std::unique_ptr<object_client>> create(bucket_settings settings);
    ~object_client();
    object_client(const object_client&) = delete;
    object_client& operator=(const object_client&) = delete;

    const bucket_settings& settings() const noexcept;
    // The bucket's key for `name`: prefix + name.
    std::string key_of(std::string_view name) const;

    // HEAD of the bucket: it exists and these credentials may use it.
    result<void> check_bucket();
    // PUT of `file` as `key`; `sha256` is the file's (hex), checked by the store and recorded
    // beside the object (x-amz-meta-sha256). A large file goes in parts (part_upload), each
    // signed with its digest in `written` when that is not null and cuts the file as it does.
    result<void> put_file(std::string_view key, const std::filesystem::path& file, std::string_view sha256,
                          const storage::part_digests* written);
    // The same, the store's answer given back whatever it is; an error only when no answer came.
    result<put_answer> try_put_file(std::string_view key, const std::filesystem::path& file, std::string_view sha256,
                                    const storage::part_digests* written);
    // The steps of a multipart upload, which s3/part_upload.hpp runs: begin (the whole file's
    // sha256 recorded beside the object to be), each part, complete (the ETags by part number),
    // and abort (a store keeps the parts of an upload never completed, unseen by readers, until
    // it is aborted): whether the store has none of it now. Between its begin and its completion
    // or abort, abort_uploads() leaves the upload alone.
    result<put_answer> begin_parts(std::string_view key, std::string_view sha256, std::string& upload_id);
    result<put_answer> put_part(std::string_view key, const std::string& upload_id, const file_part& part,
                                std::string& etag);
    result<put_answer> complete_parts(std::string_view key, const std::string& upload_id,
                                      const std::vector<std::string>& etags);
    bool abort_parts(std::string_view key, const std::string& upload_id);
    // The object's size and recorded sha256; nullopt when there is none.
    result<std::optional<object_info>> look_up(std::string_view key);
    // GET of `key` into the new file `target` (never replaced; mode `mode`), streamed a block at
    // a time and synced; an object of more than `max_bytes` is error_kind::conflict. A failed
    // download leaves no `target`. The caller checks what arrived.
    result<void> get_file(std::string_view key, const std::filesystem::path& target, std::uint64_t max_bytes,
                          unsigned mode);
    // GET of a small object whole (at most `max_bytes`).
    result<std::string> get(std::string_view key, std::uint64_t max_bytes);
    // Every object whose key begins with `prefix` (ListObjectsV2, a page of up to 1000 at a
    // time), in key order; an error from `each` stops the listing.
    result<void> list(std::string_view prefix, const std::function<result<void>(const listed_object&)>& each);
    // DELETE; an absent object is not an error (S3 answers 204 either way).
    result<void> remove(std::string_view key);
    // Aborts the multipart uploads of `key` begun and never completed (a run killed mid-upload
    // leaves its parts stored, unseen, for good), every page of them, but those this client runs.
    result<void> abort_uploads(std::string_view key);
    // A URL anyone may GET `key` with for `expires` from `signed_at`, no credentials needed.
    std::string presigned_get(std::string_view key, std::chrono::seconds expires,
                              std::chrono::system_clock::time_point signed_at) const;
    // GET of a URL without signing it (a presigned one), at most `max_bytes`; `range`, when
    // given, is sent as the Range header (a presigned URL signs the host alone).
    result<std::string> get_url(const std::string& url, std::uint64_t max_bytes, const std::string& range = {});

private:
    struct impl;
    explicit object_client(std::unique_ptr<impl> state) noexcept;
    std::unique_ptr<impl> impl_;
};

}  // namespace wheelhouse::s3
