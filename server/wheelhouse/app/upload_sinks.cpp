#include "wheelhouse/app/upload_sinks.hpp"

#include <cerrno>
#include <cstring>

#include <fcntl.h>
#include <unistd.h>

namespace wheelhouse::app {

result<spool_target> spool_target::create(const storage::blob_store& store) {
    auto spool = store.create_spool();
    if (!spool) return spool.error();
    storage::descriptor file{::open(spool->path().c_str(), O_WRONLY | O_CLOEXEC)};
    if (!file) {
        return make_error(error_kind::internal,
                          "cannot open spool file " + spool->path().string() + ": " + std::strerror(errno));
    }
    auto sha256 = crypto::hasher::create(crypto::hash_algorithm::sha256);
    if (!sha256) return sha256.error();
    return spool_target(std::move(spool).value(), std::move(file), std::move(sha256).value());
}

result<void> spool_target::append(std::span<const char> bytes) {
    sha256_.update(std::string_view(bytes.data(), bytes.size()));
    size_ += bytes.size();
    while (!bytes.empty()) {
        const ssize_t written = ::write(file_.get(), bytes.data(), bytes.size());
        if (written < 0) {
            if (errno == EINTR) continue;
            const int code = errno;
            return make_error(code == ENOSPC ? error_kind::unavailable : error_kind::internal,
                              std::string("the server cannot store the upload: ") + std::strerror(code));
        }
        bytes = bytes.subspan(static_cast<std::size_t>(written));
    }
    return {};
}

std::pair<storage::spool_file, ingest::received_digests> spool_target::release() {
    (void)file_.close();
    return {std::move(spool_), ingest::received_digests{sha256_.finish_hex(), size_}};
}

form_upload_sink::form_upload_sink(spool_target target, std::string_view boundary)
    : target_(std::move(target)),
      form_([this](std::span<const char> bytes) { return target_.append(bytes); }),
      parser_(boundary, form_) {}

result<void> form_upload_sink::finish() {
    if (auto finished = parser_.finish(); !finished) return finished;
    if (!form_.has_content()) {
        return invalid("no 'content' part in the form: send the wheel or sdist as -F content=@FILE");
    }
    return {};
}

}  // namespace wheelhouse::app
