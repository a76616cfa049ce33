#pragma once
// A folder that is built under a temporary name beside its final place and renamed into place
// only when complete: backups, restores and exports are whole or absent, never half-written
// under the name a person will use.
//
// Thread safety: one owner.

#include <filesystem>
#include <optional>
#include <string>

#include "wheelhouse/result.hpp"

namespace wheelhouse::storage {

class staging_dir {
public:
    // Checks that `target` is absent or an empty folder (anything else is `invalid`, with the
    // reason), creates its parent folders, and creates `<parent>/.<name>.partial-<pid>-<random>`.
    // An unwritable place is `internal`, naming the folder and the system's reason.
    static result<staging_dir> create(const std::filesystem::path& target);

    staging_dir(staging_dir&& other) noexcept;
    staging_dir& operator=(staging_dir&&) = delete;
    staging_dir(const staging_dir&) = delete;
    staging_dir& operator=(const staging_dir&) = delete;
    // Removes the temporary folder and everything in it unless it was committed.
    ~staging_dir();

    const std::filesystem::path& path() const noexcept { return path_; }
    const std::filesystem::path& target() const noexcept { return target_; }

    // Renames the temporary folder to the target (replacing an empty folder only) and syncs the
    // parent. Afterwards this object owns nothing.
    result<void> commit();

private:
    staging_dir(std::filesystem::path path, std::filesystem::path target) noexcept
        : path_(std::move(path)), target_(std::move(target)) {}

    std::filesystem::path path_;
    std::filesystem::path target_;
};

// Why `target` cannot receive a new backup, restore or export, or nothing when it is absent or
// an empty folder.
std::optional<std::string> unusable_target(const std::filesystem::path& target);

}  // namespace wheelhouse::storage
