#pragma once
// The names of the blob store's files, relative to DATA: "blobs/sha256/ab/cd/<sha256>" and the
// METADATA beside it, "<…>.metadata". Pure.

#include <optional>
#include <string>
#include <string_view>

namespace wheelhouse::storage {

struct blob_path_parts {
    std::string sha256;
    bool metadata = false;  // the .metadata file, not the wheel
};

// "blobs/sha256/ab/cd/<sha256>" for `sha256` (64 lower-case hex digits).
std::string relative_blob_path(std::string_view sha256);

// The parts of a '/'-separated relative path, or nothing when it is not exactly a blob or
// metadata name of the layout: the two folder levels must be the digest's first four digits.
std::optional<blob_path_parts> parse_blob_path(std::string_view relative) noexcept;

}  // namespace wheelhouse::storage
