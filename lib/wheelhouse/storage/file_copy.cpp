#include "wheelhouse/storage/file_copy.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <system_error>

#include "wheelhouse/crypto/hasher.hpp"
#include "wheelhouse/storage/descriptor.hpp"

namespace wheelhouse::storage {
namespace {

constexpr std::size_t chunk_size = 1 << 20;

error io_error(std::string_view what, const std::filesystem::path& path, int code) {
    return make_error(code == ENOENT ? error_kind::not_found : error_kind::internal,
                      std::string(what) + " " + path.string() + ": " + std::system_category().message(code));
}

result<std::size_t> read_some(int from, std::uint8_t* buffer, std::size_t size, const std::filesystem::path& path) {
    for (;;) {
        const ssize_t count = ::read(from, buffer, size);
        if (count >= 0) return static_cast<std::size_t>(count);
        if (errno != EINTR) return io_error("reading", path, errno);
    }
}

}  // namespace

result<file_digest> hash_file(const std::filesystem::path& path) {
    descriptor source(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
    if (source.get() < 0) return io_error("opening", path, errno);
    auto hasher = crypto::hasher::create(crypto::hash_algorithm::sha256);
    if (!hasher) return hasher.error();
    std::vector<std::uint8_t> buffer(chunk_size);
    file_digest digest;
    for (;;) {
        auto count = read_some(source.get(), buffer.data(), buffer.size(), path);
        if (!count) return count.error();
        if (*count == 0) break;
        hasher->update(std::span<const std::uint8_t>(buffer.data(), *count));
        digest.size += *count;
    }
    digest.sha256 = hasher->finish_hex();
    return digest;
}

result<file_digest> copy_file_hashed(const std::filesystem::path& source_path, const std::filesystem::path& target_path,
                                     unsigned mode) {
    descriptor source(::open(source_path.c_str(), O_RDONLY | O_CLOEXEC));
    if (source.get() < 0) return io_error("opening", source_path, errno);
    descriptor target(::open(target_path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode));
    if (target.get() < 0) return io_error("creating", target_path, errno);
    // From here on a failure must not leave a partial target behind.
    const auto fail = [&](error failure) {
        ::unlink(target_path.c_str());
        return failure;
    };
    auto hasher = crypto::hasher::create(crypto::hash_algorithm::sha256);
    if (!hasher) return fail(hasher.error());
    std::vector<std::uint8_t> buffer(chunk_size);
    file_digest digest;
    for (;;) {
        auto count = read_some(source.get(), buffer.data(), buffer.size(), source_path);
        if (!count) return fail(count.error());
        if (*count == 0) break;
        hasher->update(std::span<const std::uint8_t>(buffer.data(), *count));
        if (const int code = write_all(target.get(), {reinterpret_cast<const char*>(buffer.data()), *count}); code != 0)
            return fail(io_error("writing", target_path, code));
        digest.size += *count;
    }
    if (::fsync(target.get()) != 0) return fail(io_error("syncing", target_path, errno));
    if (const int code = target.close(); code != 0) return fail(io_error("closing", target_path, code));
    digest.sha256 = hasher->finish_hex();
    return digest;
}

result<void> write_new_file(const std::filesystem::path& target_path, std::string_view bytes, unsigned mode) {
    descriptor target(::open(target_path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode));
    if (target.get() < 0) return io_error("creating", target_path, errno);
    const auto fail = [&](error failure) {
        ::unlink(target_path.c_str());
        return failure;
    };
    if (const int code = write_all(target.get(), bytes); code != 0) return fail(io_error("writing", target_path, code));
    if (::fsync(target.get()) != 0) return fail(io_error("syncing", target_path, errno));
    if (const int code = target.close(); code != 0) return fail(io_error("closing", target_path, code));
    return {};
}

result<void> sync_directory(const std::filesystem::path& directory_path) {
    descriptor directory(::open(directory_path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (directory.get() < 0) return io_error("opening", directory_path, errno);
    if (::fsync(directory.get()) != 0) return io_error("syncing", directory_path, errno);
    return {};
}

}  // namespace wheelhouse::storage
