#include "wheelhouse/storage/blob_path.hpp"

#include "wheelhouse/crypto/hasher.hpp"

namespace wheelhouse::storage {
namespace {
constexpr std::string_view prefix = "blobs/sha256/";
constexpr std::string_view metadata_suffix = ".metadata";
}  // namespace

std::string relative_blob_path(std::string_view sha256) {
    std::string path(prefix);
    path += sha256.substr(0, 2);
    path += '/';
    path += sha256.substr(2, 2);
    path += '/';
    path += sha256;
    return path;
}

std::optional<blob_path_parts> parse_blob_path(std::string_view relative) noexcept {
    if (!relative.starts_with(prefix)) return std::nullopt;
    relative.remove_prefix(prefix.size());
    blob_path_parts parts;
    if (relative.ends_with(metadata_suffix)) {
        relative.remove_suffix(metadata_suffix.size());
        parts.metadata = true;
    }
    if (relative.size() != 6 + 64 || relative[2] != '/' || relative[5] != '/') return std::nullopt;
    const auto digest = relative.substr(6);
    if (!crypto::is_sha256_hex(digest) || relative.substr(0, 2) != digest.substr(0, 2) ||
        relative.substr(3, 2) != digest.substr(2, 2))
        return std::nullopt;
    parts.sha256 = std::string(digest);
    return parts;
}

}  // namespace wheelhouse::storage
