#pragma once
// Where the bytes of the files this index holds itself (rows of mode local: uploads and
// ingests) live when they do not live under DATA/blobs/: an object store (an S3 bucket),
// content-addressed by sha256 under the same relative names as on disk (blob_path.hpp).
// lib/ opens no sockets, so the server implements it (server/wheelhouse/s3/bucket_blobs.hpp);
// blob_store calls it where it would otherwise touch blobs/.
//
// Every member blocks its thread on the network: call from a worker or a command, never from
// an I/O thread. Errors are error_kind::unavailable (try again later: 503 with Retry-After)
// unless the fault is ours (error_kind::internal: a spool file that cannot be read).

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "wheelhouse/result.hpp"
#include "wheelhouse/storage/file_copy.hpp"

namespace wheelhouse::storage {

struct stored_object {
    std::uint64_t size = 0;
    std::string sha256;  // what the object was put with; empty when another tool wrote it
};

// The sha256 of each part of a file, taken as its bytes were written: parts of `part_size` bytes
// from its start, the last one shorter. A store that takes the file in such parts signs each part
// with its digest, so it refuses bytes that changed since they arrived, and the file is not read
// again to hash them.
struct part_digests {
    std::uint64_t part_size = 0;
    std::vector<std::string> sha256;  // hex, part 1 first
};

// What a put that did not make its blob may have left in the store.
enum class leftovers {
    none,    // nothing: its pieces were thrown away
    pieces,  // pieces the store failed to throw away: the next start's sweep does, given the claim
    blob,    // the blob itself: the store was asked to make it and its answer was lost
};

// A blob put while its file is still being written (an upload's spool as the body arrives): the
// store takes the bytes in parts of part_size_for() as the file grows, each signed with the sha256
// the writer took of it (part_hashed), and the blob appears only when finish() is called; the
// writer has checked by then that the whole file hashes to the sha256 the put began with.
// Abandoned (or dropped) unfinished, it leaves no blob: the pieces are thrown away behind the
// caller's back. Thread safety: part_hashed(), grew_to() and ended() from the writer's thread,
// never blocking (an I/O thread calls them); then finish() or abandon(), once, from any thread.
class growing_put {
public:
    virtual ~growing_put() = default;  // abandons it, unless finished
    // The next part's bytes hash to `sha256`: told before grew_to() or ended() passes its end.
    virtual void part_hashed(std::string sha256) noexcept = 0;
    // The file holds `size` bytes now; they will not change.
    virtual void grew_to(std::uint64_t size) noexcept = 0;
    // The file is whole at its last size: the rest may go.
    virtual void ended() noexcept = 0;
    // Blocks until every piece is stored, checks the whole, and makes the blob. Errors as put().
    virtual result<void> finish() = 0;
    // After finish() failed: what it may have left.
    virtual leftovers left() const noexcept = 0;
    // Stops it, without waiting; `settled` hears what is left once its pieces are thrown away (or
    // that failed), on another thread, or at once when it has already stopped.
    virtual void abandon(std::function<void(leftovers)> settled) noexcept = 0;
};

// Files from this size on are worth putting while they arrive; below it, one put once whole.
inline constexpr std::uint64_t put_as_written_from = 16ull << 20;

class object_store {
public:
    virtual ~object_store() = default;
    // "s3://bucket/prefix at https://endpoint": for messages and the data folder's marker.
    virtual std::string describe() const = 0;
    // Puts `file` (whose bytes hash to `sha256`) as the blob `sha256`; whole or not at all.
    // `written`, when not null, holds the digests of its parts as it was written: the store then
    // refuses bytes that differ, and the file is not hashed again.
    virtual result<void> put(std::string_view sha256, const std::filesystem::path& file,
                             const part_digests* written) = 0;
    // The size of the parts a file of at most `most_bytes` goes to this store in; 0 when it takes
    // files whole (no part digests are worth taking).
    virtual std::uint64_t part_size_for(std::uint64_t most_bytes) const {
        (void)most_bytes;
        return 0;
    }
    // Begins putting `file`, still being written (to at most `most_bytes`), as the blob `sha256`.
    // Null when this store cannot now: the caller puts the file once it is whole. Makes no
    // request itself, so an I/O thread may call it.
    virtual std::unique_ptr<growing_put> put_as_written(std::string_view sha256, const std::filesystem::path& file,
                                                        std::uint64_t most_bytes) {
        (void)sha256, (void)file, (void)most_bytes;
        return nullptr;
    }
    virtual result<std::optional<stored_object>> look_up(std::string_view sha256) = 0;
    // Writes the blob into the new file `target` (never replaced; mode `mode`; synced), at most
    // `size` bytes, and gives the digest of what was written for the caller to compare. A failed
    // copy leaves no `target`; an absent blob is error_kind::not_found, one of another size
    // error_kind::conflict (other bytes, as a digest that differs).
    virtual result<file_digest> copy_out(std::string_view sha256, std::uint64_t size,
                                         const std::filesystem::path& target, unsigned mode) = 0;
    // An absent blob is not an error. The pieces of puts of it begun and never finished go too.
    virtual result<void> remove(std::string_view sha256) = 0;
    // Throws away the pieces of puts of the blob begun and never finished (by a run that died),
    // sparing this process's own puts in progress; the blob stays.
    virtual result<void> forget_unfinished(std::string_view sha256) {
        (void)sha256;
        return {};
    }
    // Every blob in the store (objects under its prefix that are no blob name are passed
    // over); an error from `each` stops the listing.
    virtual result<void> list(const std::function<result<void>(std::string_view sha256, std::uint64_t size)>& each) = 0;
    // A URL anyone may GET (with Range) the blob from for `expires`, no credentials needed.
    // Computed here; no request is made, so an I/O thread may call it.
    virtual std::string download_url(std::string_view sha256, std::chrono::seconds expires) const = 0;
};

}  // namespace wheelhouse::storage
