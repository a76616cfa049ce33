#pragma once
// `wheelhouse fsck`: does the blob store agree with the catalog?
//  - a local row whose blob is missing; a blob or METADATA no row uses; a blob whose bytes do
//    not hash to its name (or are not the row's size); a METADATA file missing or not matching
//    files.metadata_sha256; a file in blobs/ that is no blob store name at all.
// Remote rows (redirect, proxy) have no blob; a cache row's blob is optional, checked when present.
// With a bucket (blob_store::bucket()), local rows' bytes are its objects: listed, each one's size
// compared with its row's and, unless hashing is off, the sha256 it was put with (which the store
// checked against the bytes) with its name; orphans in it are removed by --fix as on disk.
//
// What --fix does, from safe to destructive:
//  - orphan blobs and METADATA are removed through catalog::release_blob, which re-checks
//    inside a write transaction that no row uses them, so an upload in flight is never hurt;
//  - corrupt blobs, METADATA and stray files are moved to DATA/quarantine/, never deleted;
//  - missing or corrupt METADATA is written again from the wheel when its blob is sound and
//    the METADATA inside hashes to the row's metadata_sha256;
//  - a row whose blob is missing is only deleted with `delete_missing_rows`: the row is the
//    record of an upload, and the bytes may still come back from a backup.
//
// Thread safety: runs on the caller's thread; safe beside a running server (rows and blobs
// seen to disagree are checked again before they are reported).

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "wheelhouse/result.hpp"

namespace wheelhouse::catalog {
class catalog;
}
namespace wheelhouse::storage {
class blob_store;
}

namespace wheelhouse::fsck {

enum class problem_kind {
    missing_blob,       // a local row's bytes are not in the store
    orphan_blob,        // a blob no row uses
    corrupt_blob,       // its bytes do not hash to its name, or are not the row's size
    missing_metadata,   // a row knows a metadata_sha256 but there is no .metadata file
    orphan_metadata,    // a .metadata no row uses
    corrupt_metadata,   // the .metadata does not hash to the row's metadata_sha256
    stray_file,         // a file under blobs/ that is no blob store name
};

std::string_view to_string(problem_kind kind) noexcept;

struct problem {
    problem_kind kind = problem_kind::missing_blob;
    std::string sha256;                // of the blob concerned; empty for a stray file
    std::string filename;              // a row concerned, when there is one
    std::filesystem::path path;        // the file concerned
    std::string detail;                // what was found
    bool fixed = false;
    std::string action;                // what --fix did, or what a person can do
};

struct fsck_options {
    bool fix = false;
    bool delete_missing_rows = false;  // with fix: delete rows whose blob is missing
    bool hash_blobs = true;            // false: existence and size only (fast)
};

struct fsck_report {
    std::size_t rows = 0;
    std::size_t blobs = 0;           // wheel blobs found under blobs/
    std::size_t bucket_objects = 0;  // and in the bucket, when the index's own files are in one
    std::size_t metadata_files = 0;
    std::uint64_t bytes_hashed = 0;
    std::vector<problem> problems;

    std::size_t unfixed() const noexcept;
};

result<fsck_report> check(catalog::catalog& catalog, const storage::blob_store& store, const fsck_options& options);

}  // namespace wheelhouse::fsck
