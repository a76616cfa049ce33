#pragma once
// The content-addressed store under DATA/:
//   blobs/sha256/ab/cd/<sha256>           the wheel's bytes
//   blobs/sha256/ab/cd/<sha256>.metadata  its *.dist-info/METADATA, byte for byte (PEP 658)
//   tmp/spool-<random>                    uploads and copies on their way in
//   tmp/claim-<sha256>-<random>           "this process is putting <sha256> in place": a hard
//                                         link of the upload's spool file, or an empty file
//   bucket                                when the files this index holds itself (rows of mode
//                                         local) live in an object store: which one (its
//                                         describe()), one line. Then blobs/ keeps only METADATA
//                                         and the copies of remote files, which are caches.
// A blob appears by a hard link of a spool file, so it is whole or absent, never partial, and
// an existing blob is never replaced: blobs are immutable once in place.
//
// Spool files and claims are locked (flock) by the process that made them for as long as they
// exist, so a file whose lock is free was left by a process that is gone, whatever the PIDs
// say (in a container the server is PID 1 in every run). The start-up sweep removes those.
//
// Thread safety: every member may be called from any thread.
// Deciding WHEN a blob may be removed (no catalog row references it) is the caller's job; see
// ingest::ingester.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "wheelhouse/result.hpp"
#include "wheelhouse/storage/descriptor.hpp"
#include "wheelhouse/storage/file_copy.hpp"
#include "wheelhouse/storage/object_store.hpp"

namespace wheelhouse::storage {

// A file under DATA/tmp/ that the store created and locked for one upload, copy or claim.
// Removed when this object dies, unless release()d.
class spool_file {
public:
    spool_file() = default;
    spool_file(std::filesystem::path path, descriptor lock) noexcept : path_(std::move(path)), lock_(std::move(lock)) {}
    spool_file(spool_file&& other) noexcept;
    spool_file& operator=(spool_file&& other) noexcept;
    spool_file(const spool_file&) = delete;
    spool_file& operator=(const spool_file&) = delete;
    ~spool_file() { remove(); }

    const std::filesystem::path& path() const noexcept { return path_; }
    bool owns() const noexcept { return !path_.empty(); }
    // Stops owning the file (and drops its lock) and returns its path.
    std::filesystem::path release() noexcept;
    // Deletes the file now (ignoring errors: it may already be gone), then drops the lock, so
    // no sweep ever finds it unlocked while this process lives.
    void remove() noexcept;

private:
    std::filesystem::path path_;
    descriptor lock_;  // open with flock(LOCK_EX) held
};

// An upload's blob on its way into the bucket while the spool is still written, and the claim
// taken before its first byte went: held until the pieces are thrown away should the put be
// abandoned, and left for the next start's sweep should that fail (or the process die).
struct early_blob {
    early_blob() = default;
    early_blob(spool_file claim_taken, std::unique_ptr<growing_put> started) noexcept
        : claim(std::move(claim_taken)), put(std::move(started)) {}
    early_blob(early_blob&&) noexcept = default;
    early_blob& operator=(early_blob&& other) noexcept {
        abandon();
        claim = std::move(other.claim);
        put = std::move(other.put);
        return *this;
    }
    ~early_blob() { abandon(); }
    // Abandons the put, handing it the claim.
    void abandon() noexcept;

    spool_file claim;
    std::unique_ptr<growing_put> put;
};

enum class put_outcome {
    created,          // this call put it in place
    already_present,  // it was there (same digest, so the same bytes); nothing changed
};

// When a new file in the store becomes durable.
enum class durability {
    now,      // synced (the file, its directory and any directory made for it) before returning
    at_sync,  // whenever the caller next calls sync(): a batch of puts then shares one sync
};

struct sweep_report {
    std::size_t removed = 0;          // spool files and claims of processes that are gone
    std::size_t kept = 0;             // those of live processes
    std::size_t blobs_released = 0;   // blobs of dead claims that no row named, removed
};

// Asked, for each claim a dead process left, whether its blob may go: removes it when no row
// names it, under the catalog's write lock, and returns whether it did.
using settle_claim = std::function<result<bool>(std::string_view sha256)>;

// What DATA/bucket records: the object store holding the folder's own files (its describe());
// empty when they are under blobs/.
result<std::string> recorded_bucket(const std::filesystem::path& data_dir);

// Held by `wheelhouse s3-pull --leave-bucket` while it brings a folder's files back from its
// bucket under blobs/ and then removes DATA/bucket: an exclusive lock on DATA/bucket, which every
// process using the bucket holds shared for as long as it lives (blob_store::open), so none runs
// meanwhile and none starts.
class bucket_departure {
public:
    // `bucket` must be what DATA/bucket records; refused while a process uses the bucket.
    static result<bucket_departure> begin(const std::filesystem::path& data_dir, const std::string& bucket);
    // Removes DATA/bucket, durably: from now on the folder's files are under blobs/.
    result<void> finish();

private:
    bucket_departure(std::filesystem::path marker, descriptor lock) noexcept
        : marker_(std::move(marker)), lock_(std::move(lock)) {}
    std::filesystem::path marker_;
    descriptor lock_;
};

// Whether the opener touches the bytes of rows of mode local (serve, ingest, fsck, backup,
// export do; managing publishers or reservations does not).
enum class owned_bytes { touched, untouched };

class blob_store {
public:
    // Creates DATA/blobs/sha256/ and DATA/tmp/ when missing. With `bucket`, the files this index
    // holds itself go there, and DATA/bucket records it; without, a folder whose DATA/bucket
    // names one is refused (its files are not under blobs/) unless the opener leaves them alone.
    static result<blob_store> open(const std::filesystem::path& data_dir, std::shared_ptr<object_store> bucket = {},
                                   owned_bytes use = owned_bytes::touched);

    const std::filesystem::path& data_dir() const noexcept { return data_dir_; }
    std::filesystem::path spool_dir() const { return data_dir_ / "tmp"; }
    // `sha256` must be 64 lower-case hex digits (callers check with crypto::is_sha256_hex).
    std::filesystem::path blob_path(std::string_view sha256) const;
    std::filesystem::path metadata_path(std::string_view sha256) const;

    bool has_blob(std::string_view sha256) const noexcept;
    bool has_metadata(std::string_view sha256) const noexcept;

    // The object store of the files this index holds itself; null: they are under blobs/.
    object_store* bucket() const noexcept { return bucket_.get(); }
    // Puts the bytes of a file this index holds itself (`source`, a spool file): into the bucket
    // when there is one (blocking on the network; durable when it returns; `written`, when not
    // null, the digests of its parts as it arrived), else put_blob().
    result<put_outcome> put_owned(std::string_view sha256, const std::filesystem::path& source, durability when,
                                  const part_digests* written) const;
    // The size of the parts the bucket takes a file of at most `most_bytes` in; 0 without one.
    std::uint64_t part_size_for(std::uint64_t most_bytes) const {
        return bucket_ ? bucket_->part_size_for(most_bytes) : 0;
    }
    // Begins putting `spool`, still being written, into the bucket as the blob `sha256` (a sha256
    // the client declared, checked when the spool is whole), claimed first. Nullopt without a bucket,
    // or when the bucket cannot begin now: the caller puts the spool once whole, as before.
    // Makes no request, so an I/O thread may call it.
    std::optional<early_blob> put_owned_as_written(std::string_view sha256, const spool_file& spool,
                                                   std::uint64_t most_bytes) const;
    // Throws away what puts of those bytes begun and never finished left in the bucket.
    result<void> forget_unfinished_puts(std::string_view sha256) const;
    // Copies those bytes (`size` of them, by the row) into the new file `target`, from the bucket
    // when there is one, else from blobs/; as copy_file_hashed, the digest is of what was written.
    result<file_digest> copy_owned_out(std::string_view sha256, std::uint64_t size, const std::filesystem::path& target,
                                       unsigned mode) const;
    // Whether those bytes are in place; the bucket's failure to answer is an error.
    result<bool> has_owned(std::string_view sha256) const;

    // A new, empty spool file (mode 0600, exclusive create, locked) for the caller to fill.
    result<spool_file> create_spool() const;
    // A claim on the blob `sha256`, taken before putting it (or its METADATA) in place and held
    // until the row that names it is committed or the blob released: should the process die in
    // between, the sweep finds the claim unlocked and settles the blob. An empty file of its own.
    result<spool_file> claim_blob(std::string_view sha256) const;
    // The same claim as a second name of `bytes`, the spool holding the blob's bytes: locked by
    // `bytes`' lock, so it is held for as long as `bytes` is, and it costs no inode of its own.
    // (On ext4 without a journal every new inode skips each inode freed in the last 60 to 360 s,
    // so an empty file made and deleted per upload made every create slower as uploads went
    // on: bench/UPLOADS.md.) Remove the claim before `bytes`, so it is never seen unlocked.
    result<spool_file> claim_blob(std::string_view sha256, const spool_file& bytes) const;

    // Puts `source` (a spool file, on the same file system) in place as the blob `sha256` by a
    // hard link, so `source` stays for the caller to remove. Does not hash: the caller has.
    // Never replaces an existing blob.
    result<put_outcome> put_blob(std::string_view sha256, const std::filesystem::path& source,
                                 durability when = durability::now) const;
    // Writes METADATA beside the blob, by the same spool-then-link path.
    result<put_outcome> put_metadata(std::string_view sha256, std::string_view metadata,
                                     durability when = durability::now) const;

    // Makes every put with durability::at_sync before this call durable, and the claims' names:
    // one syncfs(2) of the file system holding blobs/ (and of tmp/'s, should it be another); with
    // a bucket, an fsync of each such file (METADATA) and its directories, and of tmp/.
    result<void> sync() const;

    // Moves a damaged file out of blobs/ into DATA/quarantine/ (never deleted: a person may look
    // at it), and gives its new path.
    result<std::filesystem::path> quarantine(const std::filesystem::path& path) const;
    // Deletes the blob and its metadata, and the bucket's object when there is a bucket; absent
    // files are not an error.
    result<void> remove(std::string_view sha256) const;

    // Removes the spool files and claims whose lock is free: their process is gone. A dead
    // claim is settled first (`settle`), and stays when that fails, for the next sweep. Run at
    // start-up; safe while other processes ingest (their files are locked).
    result<sweep_report> sweep_spool(const settle_claim& settle) const;

private:
    blob_store(std::filesystem::path data_dir, std::shared_ptr<object_store> bucket)
        : data_dir_(std::move(data_dir)), bucket_(std::move(bucket)) {}
    result<void> lock_bucket_marker();
    result<put_outcome> link_into_place(const std::filesystem::path& source, const std::filesystem::path& target,
                                        durability when) const;
    result<spool_file> create_locked(std::string_view name_prefix) const;
    result<void> sync_listed() const;

    // With a bucket, the local files put with durability::at_sync and the directories their names
    // went into, for sync() to fsync: a syncfs would also write out tmp/'s spools of uploads in
    // flight, each a GiB of bytes already in the bucket and deleted in a moment.
    struct unsynced_paths {
        std::mutex guard;
        std::vector<std::filesystem::path> files;
        std::set<std::filesystem::path> directories;
    };

    std::filesystem::path data_dir_;
    std::shared_ptr<object_store> bucket_;
    std::shared_ptr<unsynced_paths> unsynced_ = std::make_shared<unsynced_paths>();
    std::shared_ptr<descriptor> marker_lock_;  // DATA/bucket, locked shared, while a bucket is used
};

}  // namespace wheelhouse::storage
