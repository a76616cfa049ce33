#pragma once
// Where an upload's body goes while it arrives: straight into a spool file (a raw upload, curl
// -T), or through the multipart parser, whose `content` part goes into the spool file (twine, curl -F).
// Either way the wheel is never held in memory, and dropping the sink removes the spool file.

#include <memory>
#include <optional>

#include "wheelhouse/crypto/hasher.hpp"
#include "wheelhouse/ingest/ingester.hpp"
#include "wheelhouse/storage/blob_store.hpp"
#include "wheelhouse/storage/descriptor.hpp"
#include "wheelhouse/transport/request_handler.hpp"
#include "wheelhouse/upload/multipart_parser.hpp"

namespace wheelhouse::app {

// What a sink hands the ingester: the spool, its digests, and its blob when that went to the
// bucket while the body arrived.
struct received_upload {
    storage::spool_file spool;
    ingest::received_digests digests;
    std::shared_ptr<storage::early_blob> early;
};

// An open spool file that bytes are appended to, hashed as they pass: the ingester then need
// not read a large wheel back for its SHA-256. With a bucket, a large file whose sha256 the client
// declared before its bytes (twine's sha256_digest field) goes to the bucket as it arrives, so the
// upload into the store ends soon after the body does.
class spool_target {
public:
    // At most `most_bytes` will be appended.
    static result<spool_target> create(const storage::blob_store& store, std::uint64_t most_bytes);

    // `declared`: the sha256 the client says the file has, when it has said so by now.
    result<void> append(std::span<const char> bytes, std::optional<std::string_view> declared = std::nullopt);
    // Every byte is in: the rest may go to the bucket.
    void ended() noexcept;
    // Closes the descriptor and hands the file over (to the ingester).
    received_upload release();

private:
    spool_target(const storage::blob_store& store, std::uint64_t most_bytes, storage::spool_file spool,
                 storage::descriptor file, crypto::hasher sha256) noexcept
        : store_(&store), most_bytes_(most_bytes), spool_(std::move(spool)), file_(std::move(file)),
          sha256_(std::move(sha256)) {}

    const storage::blob_store* store_;
    std::uint64_t most_bytes_;
    storage::spool_file spool_;
    storage::descriptor file_;
    crypto::hasher sha256_;
    std::uint64_t size_ = 0;
    bool asked_early_ = false;
    std::shared_ptr<storage::early_blob> early_;  // after spool_: dropped (and its claim) first
};

// The one sink of an upload's body, of the row's body kind: a raw upload's bytes go straight into
// the spool file; a form's go through the multipart parser, whose `content` part goes there and
// whose fields are kept. Thread safety: the session's, then the handler's, one at a time.
class upload_sink final : public transport::body_sink {
public:
    // A raw upload: the body is the file.
    explicit upload_sink(spool_target target) : target_(std::move(target)) {}
    // A form whose parts `boundary` separates.
    upload_sink(spool_target target, std::string_view boundary);
    upload_sink(const upload_sink&) = delete;
    upload_sink& operator=(const upload_sink&) = delete;

    result<void> write(std::span<const char> bytes) override;
    result<void> finish() override;
    // The form's fields; null for a raw upload.
    const upload::form_collector* form() const noexcept { return form_ ? &form_->fields : nullptr; }
    spool_target& target() noexcept { return target_; }

private:
    struct form_reader {
        form_reader(upload::form_collector::content_writer content, std::string_view boundary)
            : fields(std::move(content)), parser(boundary, fields) {}
        upload::form_collector fields;
        upload::multipart_parser parser;
    };
    spool_target target_;
    std::optional<form_reader> form_;  // after target_, which its content writer appends to
};

}  // namespace wheelhouse::app
