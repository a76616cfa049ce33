#pragma once
// Where an upload's body goes while it arrives: straight into a spool file (a raw upload, curl
// -T), or through the multipart parser, whose `content` part goes into the spool file (twine, curl -F).
// Either way the wheel is never held in memory, and dropping the sink removes the spool file.

#include <functional>
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
// not read a large wheel back for its SHA-256. With a bucket, each part the bucket will take is
// hashed as it passes too, so the parts are signed with what arrived and never read back to hash;
// and a large file whose sha256 the client declared before its bytes (twine's sha256_digest
// field) goes to the bucket as it arrives, so the upload into the store ends soon after the body
// does.
class spool_target {
public:
    // The sha256 the client declared for a file that may go to the bucket as it arrives; nullopt
    // when it declared none by now, or the file may not go before the handler's checks.
    using early_sha256 = std::function<std::optional<std::string_view>()>;

    // At most `most_bytes` will be appended.
    static result<spool_target> create(const storage::blob_store& store, std::uint64_t most_bytes);

    // Asked once, when the file grows large enough to be worth sending as it arrives.
    void send_early_if(early_sha256 declared) { early_sha256_ = std::move(declared); }
    result<void> append(std::span<const char> bytes);
    // Every byte is in: the rest may go to the bucket. Once; later calls do nothing.
    void ended() noexcept;
    // Closes the descriptor and hands the file over (to the ingester).
    received_upload release();

private:
    spool_target(const storage::blob_store& store, std::uint64_t most_bytes, storage::spool_file spool,
                 storage::descriptor file, crypto::hasher sha256) noexcept
        : store_(&store), most_bytes_(most_bytes), spool_(std::move(spool)), file_(std::move(file)),
          sha256_(std::move(sha256)), parts_{store.part_size_for(most_bytes), {}} {}

    result<void> hash_parts(std::string_view bytes);
    // The part being hashed is whole (or the last): its digest is kept, and told to the early put.
    void close_part();

    const storage::blob_store* store_;
    std::uint64_t most_bytes_;
    storage::spool_file spool_;
    storage::descriptor file_;
    crypto::hasher sha256_;
    std::uint64_t size_ = 0;
    storage::part_digests parts_;  // part_size 0: the store takes files whole
    std::optional<crypto::hasher> part_hasher_;
    std::uint64_t part_filled_ = 0;
    bool ended_ = false;
    early_sha256 early_sha256_;
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
    // A form whose parts `boundary` separates. Its `content` goes to the bucket while it arrives
    // only when `may_store_early` allows the filename the part names (the token's scope: fail closed).
    upload_sink(spool_target target, std::string_view boundary,
                std::function<bool(std::string_view filename)> may_store_early);
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
