#pragma once
// The content-addressed store under DATA/:
//   blobs/sha256/ab/cd/<sha256>           the wheel's bytes
//   blobs/sha256/ab/cd/<sha256>.metadata  its *.dist-info/METADATA, byte for byte (PEP 658)
//   tmp/spool-<pid>-<random>              uploads and copies on their way in
// A blob appears by a hard link of a fsync'd spool file, so it is whole or absent, never
// partial, and an existing blob is never replaced: blobs are immutable once in place.
//
// Thread safety: a blob_store holds only paths; every member may be called from any thread.
// Deciding WHEN a blob may be removed (no catalog row references it) is the caller's job; see
// ingest::ingester.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <span>
#include <string_view>

#include "wheelhouse/result.hpp"

namespace wheelhouse::storage {

// A file under DATA/tmp/ that the store created for one upload or copy. Removed when this
// object dies, unless release()d.
class spool_file {
public:
    spool_file() = default;
    explicit spool_file(std::filesystem::path path) noexcept : path_(std::move(path)) {}
    spool_file(spool_file&& other) noexcept;
    spool_file& operator=(spool_file&& other) noexcept;
    spool_file(const spool_file&) = delete;
    spool_file& operator=(const spool_file&) = delete;
    ~spool_file() { remove(); }

    const std::filesystem::path& path() const noexcept { return path_; }
    bool owns() const noexcept { return !path_.empty(); }
    // Stops owning the file and returns its path.
    std::filesystem::path release() noexcept;
    // Deletes the file now (ignoring errors: it may already be gone).
    void remove() noexcept;

private:
    std::filesystem::path path_;
};

// A blob opened for reading.
class blob_reader {
public:
    blob_reader(int descriptor, std::uint64_t size) noexcept : descriptor_(descriptor), size_(size) {}
    blob_reader(blob_reader&& other) noexcept;
    blob_reader& operator=(blob_reader&&) = delete;
    blob_reader(const blob_reader&) = delete;
    blob_reader& operator=(const blob_reader&) = delete;
    ~blob_reader();

    std::uint64_t size() const noexcept { return size_; }
    // Up to out.size() bytes; 0 at the end.
    result<std::size_t> read(std::span<std::uint8_t> out);
    int descriptor() const noexcept { return descriptor_; }

private:
    int descriptor_;
    std::uint64_t size_;
};

enum class put_outcome {
    created,          // this call put it in place
    already_present,  // it was there (same digest, so the same bytes); nothing changed
};

struct sweep_report {
    std::size_t removed = 0;
    std::size_t kept = 0;  // spool files of live processes, younger than the age limit
};

class blob_store {
public:
    // Creates DATA/blobs/sha256/ and DATA/tmp/ when missing.
    static result<blob_store> open(const std::filesystem::path& data_dir);

    const std::filesystem::path& data_dir() const noexcept { return data_dir_; }
    std::filesystem::path spool_dir() const { return data_dir_ / "tmp"; }
    // `sha256` must be 64 lower-case hex digits (callers check with crypto::is_sha256_hex).
    std::filesystem::path blob_path(std::string_view sha256) const;
    std::filesystem::path metadata_path(std::string_view sha256) const;

    bool has_blob(std::string_view sha256) const noexcept;
    bool has_metadata(std::string_view sha256) const noexcept;

    // A new, empty spool file (mode 0600, exclusive create) for the caller to fill.
    result<spool_file> create_spool() const;

    // Puts `source` (a spool file, on the same file system) in place as the blob `sha256` by a
    // hard link after fsync, so `source` stays for the caller to remove. Does not hash: the
    // caller has. Never replaces an existing blob.
    result<put_outcome> put_blob(std::string_view sha256, const std::filesystem::path& source) const;
    // Writes METADATA beside the blob, by the same fsync-then-link path.
    result<put_outcome> put_metadata(std::string_view sha256, std::string_view metadata) const;

    // Deletes the blob and its metadata; absent files are not an error.
    result<void> remove(std::string_view sha256) const;

    result<blob_reader> open_blob(std::string_view sha256) const;

    // Removes spool files left by processes that are gone, and any older than `max_age` (a
    // crash leaves at most these). Run at start-up; safe while other processes ingest.
    result<sweep_report> sweep_spool(std::chrono::seconds max_age) const;

private:
    explicit blob_store(std::filesystem::path data_dir) noexcept : data_dir_(std::move(data_dir)) {}
    result<put_outcome> link_into_place(const std::filesystem::path& source, const std::filesystem::path& target) const;

    std::filesystem::path data_dir_;
};

}  // namespace wheelhouse::storage
