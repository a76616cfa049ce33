#pragma once
// Where an upload's body goes while it arrives: straight into a spool file (PUT), or through
// the multipart parser, whose `content` part goes into the spool file (twine, curl -F).
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

// An open spool file that bytes are appended to, hashed as they pass: the ingester then need
// not read a large wheel back for its SHA-256.
class spool_target {
public:
    static result<spool_target> create(const storage::blob_store& store);

    result<void> append(std::span<const char> bytes);
    // Closes the descriptor and hands the file over (to the ingester), with its digests.
    std::pair<storage::spool_file, ingest::received_digests> release();

private:
    spool_target(storage::spool_file spool, storage::descriptor file, crypto::hasher sha256) noexcept
        : spool_(std::move(spool)), file_(std::move(file)), sha256_(std::move(sha256)) {}

    storage::spool_file spool_;
    storage::descriptor file_;
    crypto::hasher sha256_;
    std::uint64_t size_ = 0;
};

class raw_upload_sink final : public transport::body_sink {
public:
    explicit raw_upload_sink(spool_target target) : target_(std::move(target)) {}
    result<void> write(std::span<const char> bytes) override { return target_.append(bytes); }
    result<void> finish() override { return {}; }
    spool_target& target() noexcept { return target_; }

private:
    spool_target target_;
};

class form_upload_sink final : public transport::body_sink {
public:
    form_upload_sink(spool_target target, std::string_view boundary);
    result<void> write(std::span<const char> bytes) override { return parser_.feed(bytes); }
    result<void> finish() override;
    const upload::form_collector& form() const noexcept { return form_; }
    spool_target& target() noexcept { return target_; }

private:
    spool_target target_;
    upload::form_collector form_;
    upload::multipart_parser parser_;
};

}  // namespace wheelhouse::app
