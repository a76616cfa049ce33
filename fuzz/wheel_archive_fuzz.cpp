// Zip archive validation (ingest/wheel_archive), the input being the archive's bytes, read both
// as an uploaded file (read_wheel_archive, from a memory file) and as a remote asset through a
// range cache (read_remote_wheel_archive). Beside memory safety:
// - a ranged reader never reads past the end: every fetch lies inside the file;
// - whatever the full check accepts, the remote check (a subset of it) accepts too, with the
//   same dist-info, METADATA, WHEEL and entry count;
// - an accepted archive stays within the limits it was given.

#include <sys/mman.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

#include "archive_limits.hpp"
#include "fuzz_support.hpp"
#include "wheelhouse/ingest/range_cache.hpp"
#include "wheelhouse/ingest/wheel_archive.hpp"

namespace {

namespace ingest = wheelhouse::ingest;

const auto& limits = wheelhouse::fuzz::small_archive_limits;

// A file in memory with a path, as read_wheel_archive wants one. One per process, rewritten.
class memory_file {
public:
    memory_file() : fd_(memfd_create("wheel", 0)) {
        if (fd_ < 0) std::abort();
    }
    ~memory_file() { close(fd_); }
    std::string write(std::string_view bytes) {
        if (ftruncate(fd_, 0) != 0 || pwrite(fd_, bytes.data(), bytes.size(), 0) != static_cast<ssize_t>(bytes.size()))
            std::abort();
        return "/proc/self/fd/" + std::to_string(fd_);
    }

private:
    int fd_;
};

wheelhouse::result<ingest::wheel_archive> read_remote(std::string_view bytes) {
    const std::uint64_t size = bytes.size();
    ingest::range_cache cache(
        size,
        [&](std::uint64_t offset, std::uint64_t length) -> wheelhouse::result<std::string> {
            WHEELHOUSE_FUZZ_CHECK(offset <= size && length <= size - offset,
                                  "fetch of " + std::to_string(length) + " at " + std::to_string(offset) + " of " +
                                      std::to_string(size));
            return std::string(bytes.substr(offset, length));
        },
        4096);
    // As registration does: the size probe's answer (the file's last bytes) seeds the cache.
    const std::uint64_t suffix = std::min<std::uint64_t>(size, 1024);
    cache.seed(size - suffix, std::string(bytes.substr(size - suffix)));
    return ingest::read_remote_wheel_archive(cache, limits);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    static memory_file file;
    const auto bytes = wheelhouse::fuzz::as_text(data, size);
    auto local = ingest::read_wheel_archive(file.write(bytes), limits);
    auto remote = read_remote(bytes);
    if (!local) {
        WHEELHOUSE_FUZZ_CHECK(!local.error().message.empty(), "a refusal without a message");
        return 0;
    }
    WHEELHOUSE_FUZZ_CHECK(local->entries_verified && local->entry_count <= limits.max_entries &&
                              local->uncompressed_size <= limits.max_total_uncompressed,
                          local->dist_info);
    WHEELHOUSE_FUZZ_CHECK(remote.has_value(), "accepted as a file, refused as a remote asset: " +
                                                  (remote ? std::string() : remote.error().message));
    WHEELHOUSE_FUZZ_CHECK(remote->dist_info == local->dist_info && remote->metadata == local->metadata &&
                              remote->wheel == local->wheel && remote->entry_count == local->entry_count,
                          local->dist_info + " vs " + remote->dist_info);
    return 0;
}
