#pragma once
// The one way a wheel or an sdist enters the index, whether it arrives by upload or from
// `wheelhouse ingest`: parse the filename (distribution::archive_name: .whl or PEP 625 .tar.gz), hash
// the bytes (checking any digests the client sent), refuse a taken filename with other bytes,
// validate the archive and its METADATA or PKG-INFO, decode a wheel's variant, put blob and
// core metadata in the store and the row in the catalog. A failure at any
// step leaves no row, no blob of ours and no spool file, and says exactly what was wrong.
//
// Durability: the blob, its METADATA and their directories are put in place unsynced, and the
// row is handed to a commit_queue, which syncs the store once for a whole batch of uploads and
// then commits their rows with one synced commit. An outcome is reported only after that: a
// `created` or `identical` survives a power cut. Each put is covered by a claim in DATA/tmp/
// until its row is committed, so a crash in between leaves an orphan blob that recover()
// removes at the next start.
//
// Thread safety: every member may be called from any thread at the same time (catalog and
// blob_store are both safe so); concurrent ingests of one filename end with exactly one row.

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "wheelhouse/catalog/catalog.hpp"
#include "wheelhouse/ingest/commit_queue.hpp"
#include "wheelhouse/ingest/sdist_validation.hpp"
#include "wheelhouse/ingest/wheel_archive.hpp"
#include "wheelhouse/ingest/wheel_validation.hpp"
#include "wheelhouse/pep427/wheel_filename.hpp"
#include "wheelhouse/result.hpp"
#include "wheelhouse/storage/blob_store.hpp"

namespace wheelhouse::ingest {

// Digests a client sent with its upload (twine's sha256_digest, blake2_256_digest, md5_digest),
// hex. Each one given must match the bytes received.
struct expected_digests {
    std::optional<std::string> sha256;
    std::optional<std::string> blake2_256;
    std::optional<std::string> md5;
};

// What was computed of an upload while its bytes were written to the spool file, so the
// file is not read again for them.
struct received_digests {
    std::string sha256;  // hex, of every byte in the spool
    std::uint64_t size = 0;
    storage::part_digests parts;  // with a bucket, each part's as the bucket takes them; else none
};

struct ingest_options {
    std::optional<std::string> uploaded_by;  // the token's name; "cli" for `wheelhouse ingest`
    expected_digests expected;
    archive_limits limits;
    std::uint64_t max_file_size = 16ULL << 30;
    std::optional<received_digests> received;  // ingest_spool only
    // The spool's blob, put into the bucket while it arrived (ingest_spool only): completed if the
    // file is accepted, else abandoned. Taken by the ingest.
    std::shared_ptr<storage::early_blob> early_blob;
    // The project the upload form named beside the file (twine sends METADATA's Name). Checked
    // after the archive, so a wheel whose METADATA names another project is told that first.
    std::optional<std::string> form_project;
    // PEP 740's provenance object of the upload's verified attestations (attest/provenance.hpp),
    // kept with the row when this ingest creates it; "" for none.
    std::string provenance;
    // More writes of the caller's in the transaction that stores the file, run when the upload
    // succeeds (created or identical), so they share its commit: the upload token's last use.
    // Its failure fails the upload.
    std::function<result<void>(sqlite::connection&)> in_same_commit;
};

enum class ingest_outcome {
    created,    // 201: a new file
    identical,  // 200: these very bytes are already there under this filename; nothing changed
};

struct ingest_result {
    ingest_outcome outcome = ingest_outcome::created;
    catalog::file_record file;
};

// Told an ingest's outcome exactly once: on the calling thread when it is refused before its
// row is queued, else on the commit queue's thread once the commit is synced.
using ingest_completion = std::function<void(result<ingest_result>)>;

// A wheel or sdist that stays where it is (a release asset), served by redirect or proxy from `url`.
struct remote_file {
    std::string url;
    std::optional<std::string> fetch_url;  // where proxy and cache read it, when not from `url`
    catalog::download_mode mode = catalog::download_mode::redirect;
    std::string sha256;  // lower-case hex of the whole asset, established by the caller
    std::uint64_t size = 0;
    std::optional<std::string> uploaded_by;
    std::function<result<void>(sqlite::connection&)> in_same_commit;  // as ingest_options'
};

// Error kinds of ingest: invalid (400: not a wheel, or it breaks a rule; the digests sent do
// not match), conflict (409: "File already exists" with other bytes), too_large (413),
// unavailable (503: the database stayed locked), internal (500: disk or database).
class ingester {
public:
    ingester(catalog::catalog& catalog, const storage::blob_store& store, commit_queue_options commits = {}) noexcept
        : catalog_(catalog), store_(store), commits_(catalog, store, commits) {}

    // Ingests the bytes of `spool` (from store().create_spool()) as `filename`: validates on
    // the calling thread, hands the row to the commit queue and returns; `done` is told the
    // outcome. The spool is consumed: it is gone once `done` has run, whatever the outcome.
    void ingest_spool(storage::spool_file spool, std::string_view filename, const ingest_options& options,
                      ingest_completion done);
    // The same, waiting for the outcome.
    result<ingest_result> ingest_spool(storage::spool_file spool, std::string_view filename, const ingest_options& options);

    // Ingests a file of the user's, under its own name. It is copied to a spool first, so the
    // original is never moved or changed, and later changes to it cannot reach the store.
    result<ingest_result> ingest_file(const std::filesystem::path& path, const ingest_options& options);

    // The row already under `filename`: identical when its sha256 is `sha256`, a conflict error
    // when it is not, nullopt when the name is free. Lets a registration stop before fetching.
    result<std::optional<ingest_result>> find_existing(std::string_view filename, std::string_view sha256);

    // Registers a remote wheel validated from its parts (validate_remote_wheel): the same row an
    // upload makes (make_file_record) with `remote`'s mode and URL, and its METADATA in the store
    // for PEP 658. Same outcomes and errors as ingest_spool; no row and no METADATA of ours
    // stays behind on failure.
    result<ingest_result> register_remote(const pep427::wheel_filename& wheel, const validated_wheel& validated,
                                          const remote_file& remote);
    // The same for a remote sdist, validated whole (validate_sdist) from a copy the caller read;
    // its PKG-INFO goes in the store when it is served as core metadata (has_static_metadata).
    result<ingest_result> register_remote(const pep625::sdist_filename& sdist, const validated_sdist& validated,
                                          const remote_file& remote);

    // Deletes a file's row, then its blob and METADATA once no other row shares the bytes.
    result<catalog::file_record> delete_file(std::string_view filename, std::string_view actor);

    // Start-up: removes the spool files of processes that are gone, and the blobs they had put
    // in place but not yet listed (a crash between the two): each only when no row names it,
    // under the catalog's write lock, so it is safe beside other processes ingesting.
    result<storage::sweep_report> recover();

    // An upload queued for a worker, whose ingest_spool will come: keep the guard until then, so
    // that a batch opening meanwhile waits for it (commit_queue::expect).
    [[nodiscard]] commit_queue::arrival expect() { return commits_.expect(); }

    // Commits the rows queued so far and tells their completions; see commit_queue::drain.
    void finish_commits() { commits_.drain(); }
    const commit_queue& commits() const noexcept { return commits_; }

    const storage::blob_store& store() const noexcept { return store_; }

private:
    struct pending_add;
    result<ingest_result> register_remote_row(catalog::file_record file, std::string display_name, std::string metadata,
                                              const remote_file& remote);
    void confirm_identical(catalog::file_record existing, const ingest_options& options, ingest_completion done);
    // Claims the blob and puts a spool's bytes in place; put_files() then adds the METADATA
    // (claiming and putting first when that was not done beside the validation). On failure,
    // what this ingest put is taken back out.
    result<void> put_bytes(pending_add& pending);
    // Completes the blob put while the spool arrived; on failure takes back what it may have put.
    result<void> finish_growing(pending_add& pending);
    result<void> put_files(pending_add& pending);
    result<void> ensure_in_store(pending_add& pending);
    void submit(std::shared_ptr<pending_add> pending, ingest_completion done);
    void answer(pending_add& pending, result<void> committed, const ingest_completion& done);
    // Takes `sha256`'s bytes back out when no row uses them. Should that fail (the bucket
    // down), `claim` is left behind unlocked, so the next start's sweep tries again.
    void release_or_leave_claim(std::string_view sha256, storage::spool_file& claim);

    catalog::catalog& catalog_;
    const storage::blob_store& store_;
    commit_queue commits_;  // last: its thread stops before the members it uses go
};

}  // namespace wheelhouse::ingest
