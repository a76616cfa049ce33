#include "wheelhouse/app/upload_sinks.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>

#include <fcntl.h>
#include <unistd.h>

namespace wheelhouse::app {

result<spool_target> spool_target::create(const storage::blob_store& store, std::uint64_t most_bytes) {
    auto spool = store.create_spool();
    if (!spool) return spool.error();
    storage::descriptor file{::open(spool->path().c_str(), O_WRONLY | O_CLOEXEC)};
    if (!file) {
        return make_error(error_kind::internal,
                          "cannot open spool file " + spool->path().string() + ": " + std::strerror(errno));
    }
    auto sha256 = crypto::hasher::create(crypto::hash_algorithm::sha256);
    if (!sha256) return sha256.error();
    return spool_target(store, most_bytes, std::move(spool).value(), std::move(file), std::move(sha256).value());
}

result<void> spool_target::append(std::span<const char> bytes) {
    // Asked once, when the file reaches the size worth it: a small upload never starts one.
    if (!asked_early_ && size_ + bytes.size() >= storage::put_as_written_from) {
        asked_early_ = true;
        const auto declared = early_sha256_ ? early_sha256_() : std::nullopt;
        if (declared && crypto::is_sha256_hex(*declared)) {
            if (auto early = store_->put_owned_as_written(*declared, spool_, most_bytes_)) {
                early_ = std::make_shared<storage::early_blob>(std::move(*early));
                for (const auto& digest : parts_.sha256) early_->put->part_hashed(digest);
            }
        }
    }
    sha256_.update(std::string_view(bytes.data(), bytes.size()));
    if (auto hashed = hash_parts(std::string_view(bytes.data(), bytes.size())); !hashed) return hashed;
    size_ += bytes.size();
    if (const int code = storage::write_all(file_.get(), {bytes.data(), bytes.size()}); code != 0) {
        return make_error(code == ENOSPC ? error_kind::unavailable : error_kind::internal,
                          std::string("the server cannot store the upload: ") + std::strerror(code));
    }
    if (early_) early_->put->grew_to(size_);
    return {};
}

result<void> spool_target::hash_parts(std::string_view bytes) {
    while (parts_.part_size != 0 && !bytes.empty()) {
        if (!part_hasher_) {
            auto hasher = crypto::hasher::create(crypto::hash_algorithm::sha256);
            if (!hasher) return hasher.error();
            part_hasher_.emplace(std::move(*hasher));
        }
        const auto take = static_cast<std::size_t>(std::min<std::uint64_t>(bytes.size(), parts_.part_size - part_filled_));
        part_hasher_->update(bytes.substr(0, take));
        part_filled_ += take;
        bytes.remove_prefix(take);
        if (part_filled_ == parts_.part_size) close_part();
    }
    return {};
}

void spool_target::close_part() {
    parts_.sha256.push_back(part_hasher_->finish_hex());
    part_hasher_.reset();
    part_filled_ = 0;
    if (early_) early_->put->part_hashed(parts_.sha256.back());
}

void spool_target::ended() noexcept {
    if (ended_) return;
    ended_ = true;
    if (part_filled_ > 0) close_part();
    if (early_) early_->put->ended();
}

received_upload spool_target::release() {
    (void)file_.close();
    ended();
    return {std::move(spool_), ingest::received_digests{sha256_.finish_hex(), size_, std::move(parts_)}, std::move(early_)};
}

upload_sink::upload_sink(spool_target target, std::string_view boundary,
                         std::function<bool(std::string_view filename)> may_store_early)
    : target_(std::move(target)) {
    form_.emplace([this](std::span<const char> bytes) { return target_.append(bytes); }, boundary);
    // twine sends sha256_digest before the content (requests puts the files last)
    target_.send_early_if([this, may = std::move(may_store_early)]() -> std::optional<std::string_view> {
        if (!may(form_->fields.content_filename())) return std::nullopt;
        return form_->fields.first_value("sha256_digest");
    });
}

result<void> upload_sink::write(std::span<const char> bytes) {
    return form_ ? form_->parser.feed(bytes) : target_.append(bytes);
}

result<void> upload_sink::finish() {
    target_.ended();
    if (!form_) return {};
    if (auto finished = form_->parser.finish(); !finished) return finished;
    if (!form_->fields.has_content()) {
        return invalid("no 'content' part in the form: send the wheel or sdist as -F content=@FILE");
    }
    return {};
}

}  // namespace wheelhouse::app
