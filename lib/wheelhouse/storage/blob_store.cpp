#include "wheelhouse/storage/blob_store.hpp"

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <random>
#include <string>
#include <system_error>
#include <utility>

namespace wheelhouse::storage {
namespace {

constexpr std::string_view spool_prefix = "spool-";

std::string describe(int code) { return std::system_category().message(code); }

error io_error(std::string_view what, const std::filesystem::path& path, int code) {
    return make_error(error_kind::internal,
                      "blob store: " + std::string(what) + " " + path.string() + ": " + describe(code));
}

// Opens, fsyncs and closes: makes a file's bytes, or a directory's entries, durable.
result<void> sync_path(const std::filesystem::path& path, bool directory) {
    const int descriptor = ::open(path.c_str(), (directory ? O_RDONLY | O_DIRECTORY : O_RDONLY) | O_CLOEXEC);
    if (descriptor < 0) return io_error("opening", path, errno);
    const int synced = ::fsync(descriptor);
    const int code = errno;
    ::close(descriptor);
    if (synced != 0) return io_error("syncing", path, code);
    return {};
}

result<void> make_directories(const std::filesystem::path& path) {
    std::error_code failure;
    std::filesystem::create_directories(path, failure);
    if (failure) return io_error("creating directory", path, failure.value());
    return {};
}

std::string random_hex() {
    thread_local std::mt19937_64 generator{std::random_device{}()};
    const std::uint64_t value = generator();
    char buffer[17] = {};
    auto [end, code] = std::to_chars(buffer, buffer + 16, value, 16);
    (void)code;
    return std::string(static_cast<std::size_t>(16 - (end - buffer)), '0') + std::string(buffer, end);
}

// The pid a spool file's name carries, or 0 when the name is not one of ours.
pid_t spool_owner(std::string_view name) {
    if (!name.starts_with(spool_prefix)) return 0;
    name.remove_prefix(spool_prefix.size());
    pid_t pid = 0;
    auto [end, code] = std::from_chars(name.data(), name.data() + name.size(), pid);
    if (code != std::errc{} || end == name.data() + name.size() || *end != '-') return 0;
    return pid;
}

bool process_alive(pid_t pid) { return ::kill(pid, 0) == 0 || errno == EPERM; }

}  // namespace

spool_file::spool_file(spool_file&& other) noexcept : path_(std::exchange(other.path_, {})) {}

spool_file& spool_file::operator=(spool_file&& other) noexcept {
    if (this != &other) {
        remove();
        path_ = std::exchange(other.path_, {});
    }
    return *this;
}

std::filesystem::path spool_file::release() noexcept { return std::exchange(path_, {}); }

void spool_file::remove() noexcept {
    if (path_.empty()) return;
    ::unlink(path_.c_str());
    path_.clear();
}

blob_reader::blob_reader(blob_reader&& other) noexcept
    : descriptor_(std::exchange(other.descriptor_, -1)), size_(other.size_) {}

blob_reader::~blob_reader() {
    if (descriptor_ >= 0) ::close(descriptor_);
}

result<std::size_t> blob_reader::read(std::span<std::uint8_t> out) {
    for (;;) {
        const ssize_t count = ::read(descriptor_, out.data(), out.size());
        if (count >= 0) return static_cast<std::size_t>(count);
        if (errno != EINTR) {
            return make_error(error_kind::internal, "blob store: reading a blob: " + describe(errno));
        }
    }
}

result<blob_store> blob_store::open(const std::filesystem::path& data_dir) {
    blob_store store(data_dir);
    if (auto made = make_directories(data_dir / "blobs" / "sha256"); !made) return made.error();
    if (auto made = make_directories(store.spool_dir()); !made) return made.error();
    return store;
}

std::filesystem::path blob_store::blob_path(std::string_view sha256) const {
    return data_dir_ / "blobs" / "sha256" / std::string(sha256.substr(0, 2)) / std::string(sha256.substr(2, 2)) /
           std::string(sha256);
}

std::filesystem::path blob_store::metadata_path(std::string_view sha256) const {
    auto path = blob_path(sha256);
    path += ".metadata";
    return path;
}

bool blob_store::has_blob(std::string_view sha256) const noexcept {
    struct stat info {};
    return ::stat(blob_path(sha256).c_str(), &info) == 0 && S_ISREG(info.st_mode);
}

bool blob_store::has_metadata(std::string_view sha256) const noexcept {
    struct stat info {};
    return ::stat(metadata_path(sha256).c_str(), &info) == 0 && S_ISREG(info.st_mode);
}

result<spool_file> blob_store::create_spool() const {
    for (int attempt = 0; attempt < 16; ++attempt) {
        auto path = spool_dir() / (std::string(spool_prefix) + std::to_string(::getpid()) + "-" + random_hex());
        const int descriptor = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
        if (descriptor >= 0) {
            ::close(descriptor);
            return spool_file(std::move(path));
        }
        if (errno != EEXIST) return io_error("creating spool file", path, errno);
    }
    return make_error(error_kind::internal, "blob store: no free spool file name in " + spool_dir().string());
}

result<put_outcome> blob_store::link_into_place(const std::filesystem::path& source,
                                                const std::filesystem::path& target) const {
    const auto directory = target.parent_path();
    if (auto made = make_directories(directory); !made) return made.error();
    // Durable bytes before a visible name; read-only because blobs never change.
    if (auto synced = sync_path(source, false); !synced) return synced.error();
    ::chmod(source.c_str(), 0444);

    if (::link(source.c_str(), target.c_str()) != 0) {
        const int code = errno;
        if (code == EEXIST) return put_outcome::already_present;
        if (code != EPERM && code != EOPNOTSUPP && code != EXDEV && code != EMLINK) {
            return io_error("linking " + source.string() + " to", target, code);
        }
        // A file system without hard links: rename a copy, refusing to replace an existing blob.
        auto copy = create_spool();
        if (!copy) return copy.error();
        std::error_code failure;
        std::filesystem::copy_file(source, copy->path(), std::filesystem::copy_options::overwrite_existing, failure);
        if (failure) return io_error("copying " + source.string() + " to", copy->path(), failure.value());
        if (auto synced = sync_path(copy->path(), false); !synced) return synced.error();
        ::chmod(copy->path().c_str(), 0444);
        if (::renameat2(AT_FDCWD, copy->path().c_str(), AT_FDCWD, target.c_str(), RENAME_NOREPLACE) != 0) {
            if (errno == EEXIST) return put_outcome::already_present;
            return io_error("renaming " + copy->path().string() + " to", target, errno);
        }
        copy->release();
    }
    if (auto synced = sync_path(directory, true); !synced) return synced.error();
    return put_outcome::created;
}

result<put_outcome> blob_store::put_blob(std::string_view sha256, const std::filesystem::path& source) const {
    return link_into_place(source, blob_path(sha256));
}

result<put_outcome> blob_store::put_metadata(std::string_view sha256, std::string_view metadata) const {
    if (has_metadata(sha256)) return put_outcome::already_present;
    auto spool = create_spool();
    if (!spool) return spool.error();
    const int descriptor = ::open(spool->path().c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC);
    if (descriptor < 0) return io_error("opening", spool->path(), errno);
    std::string_view rest = metadata;
    while (!rest.empty()) {
        const ssize_t written = ::write(descriptor, rest.data(), rest.size());
        if (written < 0) {
            if (errno == EINTR) continue;
            const int code = errno;
            ::close(descriptor);
            return io_error("writing", spool->path(), code);
        }
        rest.remove_prefix(static_cast<std::size_t>(written));
    }
    ::close(descriptor);
    return link_into_place(spool->path(), metadata_path(sha256));
}

result<void> blob_store::remove(std::string_view sha256) const {
    for (const auto& path : {metadata_path(sha256), blob_path(sha256)}) {
        if (::unlink(path.c_str()) != 0 && errno != ENOENT) return io_error("removing", path, errno);
    }
    if (auto synced = sync_path(blob_path(sha256).parent_path(), true); !synced) {
        // The directory may be gone with nothing in it to sync; that is not a failure.
        std::error_code failure;
        if (std::filesystem::exists(blob_path(sha256).parent_path(), failure)) return synced.error();
    }
    return {};
}

result<blob_reader> blob_store::open_blob(std::string_view sha256) const {
    const auto path = blob_path(sha256);
    const int descriptor = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (descriptor < 0) {
        if (errno == ENOENT) return make_error(error_kind::not_found, "blob store: no blob " + std::string(sha256));
        return io_error("opening", path, errno);
    }
    struct stat info {};
    if (::fstat(descriptor, &info) != 0) {
        const int code = errno;
        ::close(descriptor);
        return io_error("inspecting", path, code);
    }
    return blob_reader(descriptor, static_cast<std::uint64_t>(info.st_size));
}

result<sweep_report> blob_store::sweep_spool(std::chrono::seconds max_age) const {
    sweep_report report;
    std::error_code failure;
    std::filesystem::directory_iterator entries(spool_dir(), failure);
    if (failure) return io_error("listing", spool_dir(), failure.value());
    const auto now = std::filesystem::file_time_type::clock::now();
    for (const auto& entry : entries) {
        const auto name = entry.path().filename().string();
        const pid_t owner = spool_owner(name);
        if (owner == 0) continue;  // not ours: leave it
        const auto modified = entry.last_write_time(failure);
        if (failure) continue;  // gone already
        const bool stale = !process_alive(owner) || now - modified > max_age;
        if (!stale) {
            ++report.kept;
            continue;
        }
        if (::unlink(entry.path().c_str()) == 0) ++report.removed;
    }
    return report;
}

}  // namespace wheelhouse::storage
