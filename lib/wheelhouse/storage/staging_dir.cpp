#include "wheelhouse/storage/staging_dir.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <random>
#include <system_error>
#include <utility>

#include "wheelhouse/storage/file_copy.hpp"

namespace wheelhouse::storage {

std::optional<std::string> unusable_target(const std::filesystem::path& target) {
    std::error_code failure;
    const auto status = std::filesystem::symlink_status(target, failure);
    // Under a file: creating the parent folders says so.
    if (failure && failure != std::errc::no_such_file_or_directory && failure != std::errc::not_a_directory)
        return "cannot inspect " + target.string() + ": " + failure.message();
    if (!std::filesystem::exists(status)) return std::nullopt;
    if (!std::filesystem::is_directory(status)) return target.string() + " already exists and is not a folder";
    std::filesystem::directory_iterator entries(target, failure);
    if (failure) return "cannot read " + target.string() + ": " + failure.message();
    if (entries != std::filesystem::directory_iterator())
        return target.string() + " is not empty; name a new folder, or empty this one first";
    return std::nullopt;
}

result<staging_dir> staging_dir::create(const std::filesystem::path& given) {
    if (given.empty()) return invalid("no target folder given");
    auto target = std::filesystem::absolute(given).lexically_normal();
    if (!target.has_filename()) target = target.parent_path();  // "out/" names "out"
    if (auto reason = unusable_target(target)) return invalid(*reason);

    const auto parent = target.parent_path();
    std::error_code failure;
    std::filesystem::create_directories(parent, failure);
    if (failure) {
        return make_error(error_kind::internal,
                          "cannot create the folder " + parent.string() + ": " + failure.message());
    }
    std::random_device random;
    for (int attempt = 0; attempt < 8; ++attempt) {
        auto path = parent / ("." + target.filename().string() + ".partial-" + std::to_string(::getpid()) + "-" +
                              std::to_string(random()));
        if (::mkdir(path.c_str(), 0755) == 0) return staging_dir(std::move(path), std::move(target));
        if (errno != EEXIST) {
            return make_error(error_kind::internal, "cannot write in " + parent.string() + ": " +
                                                        std::system_category().message(errno));
        }
    }
    return make_error(error_kind::internal, "no free temporary name in " + parent.string());
}

staging_dir::staging_dir(staging_dir&& other) noexcept
    : path_(std::exchange(other.path_, {})), target_(std::move(other.target_)) {}

staging_dir::~staging_dir() {
    if (path_.empty()) return;
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
}

result<void> staging_dir::commit() {
    // rename(2) replaces an empty folder and refuses a non-empty one (ENOTEMPTY), so a folder
    // filled by someone else since create() is never clobbered.
    if (::rename(path_.c_str(), target_.c_str()) != 0) {
        const int code = errno;
        if (code == ENOTEMPTY || code == EEXIST || code == ENOTDIR || code == EISDIR)
            return invalid(target_.string() + " was created or filled by someone else meanwhile; nothing was written to it");
        return make_error(error_kind::internal, "renaming " + path_.string() + " to " + target_.string() + ": " +
                                                    std::system_category().message(code));
    }
    path_.clear();
    return sync_directory(target_.parent_path());
}

}  // namespace wheelhouse::storage
