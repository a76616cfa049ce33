#include "wheelhouse/ingest/ingester.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <array>
#include <cctype>
#include <future>
#include <system_error>
#include <utility>
#include <vector>

#include "wheelhouse/crypto/hasher.hpp"
#include "wheelhouse/error_text.hpp"
#include "wheelhouse/distribution/file_name.hpp"
#include "wheelhouse/ingest/file_record.hpp"
#include "wheelhouse/ingest/sdist_validation.hpp"
#include "wheelhouse/ingest/wheel_validation.hpp"
#include "wheelhouse/pep427/wheel_filename.hpp"
#include "wheelhouse/pep503/name.hpp"
#include "wheelhouse/storage/descriptor.hpp"
#include "wheelhouse/text/ascii.hpp"
#include "wheelhouse/text/quoted.hpp"
#include "wheelhouse/variants/build_variant.hpp"

namespace wheelhouse::ingest {
namespace {

struct file_digests {
    std::string sha256;
    std::optional<std::string> blake2_256;
    std::optional<std::string> md5;
    std::uint64_t size = 0;
};

// One pass over the file for SHA-256 (unless `with_sha256` is false) and whichever digests
// the client sent.
result<file_digests> hash_file(const std::filesystem::path& path, const expected_digests& expected,
                               std::uint64_t max_file_size, bool with_sha256 = true) {
    const storage::descriptor file(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
    if (!file) {
        return make_error(error_kind::internal, "opening " + path.string() + ": " + std::system_category().message(errno));
    }
    std::vector<crypto::hasher> hashers;
    std::vector<crypto::hash_algorithm> algorithms;
    if (with_sha256) algorithms.push_back(crypto::hash_algorithm::sha256);
    if (expected.blake2_256) algorithms.push_back(crypto::hash_algorithm::blake2b_256);
    if (expected.md5) algorithms.push_back(crypto::hash_algorithm::md5);
    for (auto algorithm : algorithms) {
        auto hasher = crypto::hasher::create(algorithm);
        if (!hasher) return hasher.error();
        hashers.push_back(std::move(hasher).value());
    }

    std::vector<std::uint8_t> buffer(1 << 20);
    file_digests digests;
    for (;;) {
        const ssize_t count = ::read(file.get(), buffer.data(), buffer.size());
        if (count < 0) {
            if (errno == EINTR) continue;
            return make_error(error_kind::internal, "reading " + path.string() + ": " + std::system_category().message(errno));
        }
        if (count == 0) break;
        digests.size += static_cast<std::uint64_t>(count);
        if (digests.size > max_file_size) {
            return make_error(error_kind::too_large, "the file is larger than the limit of " +
                                                         std::to_string(max_file_size) + " bytes");
        }
        for (auto& hasher : hashers) hasher.update(std::span<const std::uint8_t>(buffer.data(), static_cast<std::size_t>(count)));
    }
    for (auto& hasher : hashers) {
        auto hex = hasher.finish_hex();
        switch (hasher.algorithm()) {
            case crypto::hash_algorithm::blake2b_256: digests.blake2_256 = std::move(hex); break;
            case crypto::hash_algorithm::md5: digests.md5 = std::move(hex); break;
            default: digests.sha256 = std::move(hex); break;
        }
    }
    return digests;
}

using text::to_lower;

result<void> check_expected(const expected_digests& expected, const file_digests& actual) {
    const std::array<std::tuple<const char*, const std::optional<std::string>*, const std::optional<std::string>*>, 2> others = {{
        {"blake2_256_digest", &expected.blake2_256, &actual.blake2_256},
        {"md5_digest", &expected.md5, &actual.md5},
    }};
    auto damaged = [](std::string_view field, std::string_view sent, std::string_view computed) {
        return invalid("upload the file again: it was damaged or cut short on the way (its " + std::string(field) +
                           " does not match)",
                       "the upload's " + std::string(field) + " is " + std::string(sent) +
                           "; the bytes received hash to " + std::string(computed));
    };
    if (expected.sha256 && to_lower(*expected.sha256) != actual.sha256) {
        return damaged("sha256_digest", *expected.sha256, actual.sha256);
    }
    for (const auto& [field, sent, computed] : others) {
        if (*sent && *computed && to_lower(**sent) != **computed) return damaged(field, **sent, **computed);
    }
    return {};
}

error conflict_error(std::string_view filename, std::string_view existing_sha256, std::string_view new_sha256) {
    // "File already exists" first: twine --skip-existing and people searching for it know it.
    return make_error(error_kind::conflict,
                      "File already exists with other bytes: give the build a new version or build tag, or "
                      "delete the old file first",
                      std::string(filename) + " is in the index with sha256 " + std::string(existing_sha256) +
                          ", and this file's sha256 is " + std::string(new_sha256) +
                          "; a filename is never reused for other bytes");
}


// The file's name leads the detail, so a client that sent many files, and the log, see which one
// was refused; the status line keeps the reason alone.
error about(std::string_view filename, const error& failure) {
    const auto detail = detail_of(failure);
    return make_error(failure.kind, std::string(reason_of(failure)),
                      detail.empty() ? std::string(filename) : std::string(filename) + ": " + std::string(detail));
}

// PEP 792: archived and quarantined projects take no new files.
result<void> check_takes_files(catalog::catalog& catalog, const std::string& project_name) {
    auto project = catalog.find_project(project_name);
    if (!project) return project.error();
    if (*project && ((*project)->status == catalog::project_status::archived ||
                     (*project)->status == catalog::project_status::quarantined)) {
        return make_error(error_kind::forbidden, "ask an admin to set project '" + project_name + "' active: it is " +
                                                     std::string(catalog::to_string((*project)->status)) +
                                                     " and takes no new files");
    }
    return {};
}

// The spool's digests: what was computed as the bytes arrived, plus a pass over the file only
// for digests the client sent that were not (twine's blake2_256 and md5), and only without a
// sha256_digest: beside the sha256 checked against what arrived, the weaker two prove nothing
// more of the bytes, and a second pass over a 1 GiB file for them costs seconds.
result<file_digests> spool_digests(const std::filesystem::path& path, const ingest_options& options) {
    if (!options.received) return hash_file(path, options.expected, options.max_file_size);
    if (options.received->size > options.max_file_size) {
        return make_error(error_kind::too_large, "the file is larger than the limit of " +
                                                     std::to_string(options.max_file_size) + " bytes");
    }
    file_digests digests;
    if (!options.expected.sha256 && (options.expected.blake2_256 || options.expected.md5)) {
        auto others = hash_file(path, options.expected, options.max_file_size, false);
        if (!others) return others.error();
        digests = std::move(*others);
    }
    digests.sha256 = options.received->sha256;
    digests.size = options.received->size;
    return digests;
}

// The row, the project's name as METADATA or PKG-INFO spells it, and the core metadata to store
// beside the blob (none for an sdist whose PKG-INFO is not served: fsck, backup and export then
// find exactly what the row says).
struct validated_file {
    catalog::file_record file;
    std::string display_name;
    std::string metadata;
};

result<validated_file> validate(const distribution::archive_name& name, const std::filesystem::path& path,
                                const file_digests& digests, const ingest_options& options) {
    if (const auto* sdist = std::get_if<pep625::sdist_filename>(&name)) {
        auto validated = validate_sdist(path, *sdist, options.limits);
        if (!validated) return validated.error();
        validated_file out{make_file_record(*sdist, *validated, digests.sha256, digests.size, options.uploaded_by),
                           std::string(validated->metadata.name()), {}};
        if (!out.file.metadata_sha256.empty()) out.metadata = std::move(validated->archive.pkg_info);
        return out;
    }
    const auto& wheel = std::get<pep427::wheel_filename>(name);
    auto validated = validate_wheel(path, wheel, options.limits);
    if (!validated) return validated.error();
    return validated_file{make_file_record(wheel, *validated, digests.sha256, digests.size, options.uploaded_by),
                          std::string(validated->metadata.name()), std::move(validated->archive.metadata)};
}

// A form naming another project than the file's is a client's mistake (or a token's attempt on a
// project it may not touch), not something to guess between.
result<void> check_form_project(const ingest_options& options, std::string_view project) {
    if (!options.form_project || options.form_project->empty()) return {};
    if (pep503::normalize(*options.form_project) == project) return {};
    return invalid("the form's name field must name the file's project: upload each project's files on their own",
                   "the form says " + text::quoted(*options.form_project) + ", the filename names '" +
                       std::string(project) + "'");
}

// Runs `start` with a completion and waits for it to be told the outcome.
result<ingest_result> wait_for(const std::function<void(ingest_completion)>& start) {
    std::promise<result<ingest_result>> answer;
    auto answered = answer.get_future();
    start([&answer](result<ingest_result> outcome) { answer.set_value(std::move(outcome)); });
    return answered.get();
}

}  // namespace

// Files from this size on are PUT into a bucket while they are validated (both take seconds for
// a large wheel); smaller ones after, saving a thread for what costs milliseconds.
constexpr std::uint64_t put_beside_validation = 16ull << 20;

// A file whose blob and METADATA are in the store, unsynced, waiting for its row's commit.
struct ingester::pending_add {
    catalog::new_file row;
    std::string metadata;       // for PEP 658, and to put it again should it vanish
    storage::spool_file spool;  // the wheel's bytes (none for a remote file), likewise
    storage::spool_file claim;  // held until the row is committed or the blob released
    storage::part_digests parts;  // the spool's, as it arrived (none when not taken)
    std::unique_ptr<storage::growing_put> growing;  // the blob, on its way while the spool arrived
    bool put_by_us = false;     // this ingest put the blob or its METADATA in place
    std::function<result<void>(sqlite::connection&)> in_same_commit;
    std::optional<catalog::add_result> added;  // set by the write, on the commit queue's thread

    const storage::part_digests* written_parts() const noexcept { return parts.sha256.empty() ? nullptr : &parts; }
    // Once the outcome is settled, before it is told: an answered upload has left nothing in tmp/.
    void drop_files() noexcept {
        // An abandoned put holds the claim until its pieces are thrown away.
        if (growing) storage::early_blob(std::move(claim), std::move(growing)).abandon();
        claim.remove();  // first: it may be a name of the spool, locked by the spool's lock
        spool.remove();
    }
};

result<ingest_result> ingester::ingest_spool(storage::spool_file spool, std::string_view filename,
                                             const ingest_options& options) {
    return wait_for([&](ingest_completion done) { ingest_spool(std::move(spool), filename, options, std::move(done)); });
}

void ingester::ingest_spool(storage::spool_file spool, std::string_view filename, const ingest_options& options,
                            ingest_completion done) {
    const auto arriving = commits_.expect();
    // A blob put while the spool arrived: abandoned with its claim, before the spool goes.
    storage::early_blob early = options.early_blob ? std::move(*options.early_blob) : storage::early_blob{};
    auto drop_spool = [&] {
        early = {};
        spool.remove();
    };
    // Whatever the outcome, the spool is gone before `done` hears it.
    auto refuse = [&](const error& failure) {
        drop_spool();
        done(about(filename, failure));
    };
    auto name = distribution::parse_archive_name(filename);
    if (!name) {  // its detail names the file already
        drop_spool();
        return done(name.error());
    }

    auto digests = spool_digests(spool.path(), options);
    if (!digests) return refuse(digests.error());
    if (auto matches = check_expected(options.expected, *digests); !matches) return refuse(matches.error());

    // A re-upload of the same bytes, or a clash, is answered before the costly validation.
    auto existing = catalog_.find_file(filename);
    if (!existing) return refuse(existing.error());
    if (*existing) {
        drop_spool();
        if ((*existing)->sha256 != digests->sha256) {
            return done(conflict_error(filename, (*existing)->sha256, digests->sha256));
        }
        if (auto agrees = check_form_project(options, distribution::project_of(*name)); !agrees) return done(agrees.error());
        return confirm_identical(std::move(**existing), options, std::move(done));
    }
    if (auto open = check_takes_files(catalog_, distribution::project_of(*name)); !open) return refuse(open.error());

    auto pending = std::make_shared<pending_add>();
    pending->spool = std::move(spool);
    if (options.received) pending->parts = options.received->parts;
    pending->row.file.sha256 = digests->sha256;
    // Its sha256 checked above, a blob that went to the bucket as it arrived is finished once the
    // file is valid. Else, with a bucket, a large file's PUT (seconds) goes out beside its
    // validation: no row names the object before the commit, and a refusal takes it back out, as a
    // failed commit does.
    std::future<result<void>> early_put;
    if (early.put) {
        pending->claim = std::move(early.claim);
        pending->growing = std::move(early.put);
    } else if (store_.bucket() != nullptr && digests->size >= put_beside_validation) {
        early_put = std::async(std::launch::async, [this, pending] { return put_bytes(*pending); });
    }
    auto validated = validate(*name, pending->spool.path(), *digests, options);
    auto put = early_put.valid() ? early_put.get() : result<void>{};
    if (validated && pending->growing) put = finish_growing(*pending);
    const auto refuse_pending = [&](const error& failure) {
        if (put && pending->put_by_us) release_or_leave_claim(digests->sha256, pending->claim);
        pending->drop_files();
        done(about(filename, failure));
    };
    if (!validated) return refuse_pending(validated.error());
    if (!put) return refuse_pending(put.error());  // put_bytes took back what it put
    if (auto agrees = check_form_project(options, distribution::project_of(*name)); !agrees)
        return refuse_pending(agrees.error());

    pending->row.file = std::move(validated->file);
    pending->row.project_display_name = std::move(validated->display_name);
    pending->row.provenance = options.provenance;
    pending->metadata = std::move(validated->metadata);
    pending->in_same_commit = options.in_same_commit;
    if (auto stored = put_files(*pending); !stored) {
        pending->drop_files();
        return done(about(filename, stored.error()));
    }
    submit(std::move(pending), std::move(done));
}

void ingester::confirm_identical(catalog::file_record existing, const ingest_options& options, ingest_completion done) {
    if (!options.in_same_commit) return done(ingest_result{ingest_outcome::identical, std::move(existing)});
    auto found = std::make_shared<catalog::file_record>(std::move(existing));
    queued_commit commit;
    commit.write.work = [work = options.in_same_commit](sqlite::connection& db) -> result<std::string> {
        if (auto done_here = work(db); !done_here) return done_here.error();
        return std::string();
    };
    commit.done = [found, done = std::move(done)](result<void> committed) {
        if (!committed) return done(about(found->filename, committed.error()));
        done(ingest_result{ingest_outcome::identical, std::move(*found)});
    };
    commits_.submit(std::move(commit));
}

result<void> ingester::put_bytes(pending_add& pending) {
    const std::string& sha256 = pending.row.file.sha256;
    // Before anything is put: a crash then leaves it. A name of the spool when there is one.
    auto claim = pending.spool.owns() ? store_.claim_blob(sha256, pending.spool) : store_.claim_blob(sha256);
    if (!claim) return claim.error();
    pending.claim = std::move(claim).value();
    if (!pending.spool.owns()) return {};
    // A PUT the store finishes after we gave up on it leaves an object: count it ours.
    pending.put_by_us = store_.bucket() != nullptr;
    auto blob = store_.put_owned(sha256, pending.spool.path(), storage::durability::at_sync, pending.written_parts());
    if (blob) pending.put_by_us = pending.put_by_us || *blob == storage::put_outcome::created;
    if (!blob && pending.put_by_us) release_or_leave_claim(sha256, pending.claim);  // ours: take it back out
    if (!blob) return blob.error();
    return {};
}

result<void> ingester::finish_growing(pending_add& pending) {
    auto finished = pending.growing->finish();
    // A completion the store finishes after we gave up leaves an object: count it ours.
    pending.put_by_us = finished || pending.growing->left() == storage::leftovers::blob;
    if (pending.put_by_us) {
        pending.growing.reset();
        if (!finished) release_or_leave_claim(pending.row.file.sha256, pending.claim);
        return finished;
    }
    // Its pieces are thrown away as a refused upload's are, the claim going when they have: a
    // finish refused before the store was asked (a resting bucket) leaves the upload running.
    storage::early_blob(std::move(pending.claim), std::move(pending.growing)).abandon();
    return finished;
}

result<void> ingester::put_files(pending_add& pending) {
    const std::string& sha256 = pending.row.file.sha256;
    if (!pending.claim.owns()) {  // else put beside the validation
        if (auto bytes = put_bytes(pending); !bytes) return bytes;
    }
    if (pending.row.file.metadata_sha256.empty()) return {};  // an sdist whose PKG-INFO is not served
    auto metadata = store_.put_metadata(sha256, pending.metadata, storage::durability::at_sync);
    if (metadata) {
        pending.put_by_us = pending.put_by_us || *metadata == storage::put_outcome::created;
        return {};
    }
    if (pending.put_by_us) release_or_leave_claim(sha256, pending.claim);  // ours: take it back out
    return metadata.error();
}

result<void> ingester::ensure_in_store(pending_add& pending) {
    // Under the catalog's write lock, just before the row goes in: a delete of another file with
    // the same bytes may have released them since they were put, so they are put again, synced
    // at once since the batch's sync is past.
    const std::string& sha256 = pending.row.file.sha256;
    if (pending.spool.owns()) {
        auto present = store_.has_owned(sha256);
        if (!present) return present.error();
        if (!*present) {
            auto blob = store_.put_owned(sha256, pending.spool.path(), storage::durability::now, pending.written_parts());
            if (!blob) return blob.error();
            pending.put_by_us = pending.put_by_us || *blob == storage::put_outcome::created;
        }
    }
    if (!pending.row.file.metadata_sha256.empty() && !store_.has_metadata(sha256)) {
        auto metadata = store_.put_metadata(sha256, pending.metadata, storage::durability::now);
        if (!metadata) return metadata.error();
        pending.put_by_us = pending.put_by_us || *metadata == storage::put_outcome::created;
    }
    return {};
}

void ingester::submit(std::shared_ptr<pending_add> pending, ingest_completion done) {
    queued_commit commit;
    commit.syncs_blobs = true;
    commit.write.work = [this, pending](sqlite::connection& db) -> result<std::string> {
        auto added = catalog::add_file_in_transaction(db, pending->row, [&] { return ensure_in_store(*pending); });
        if (!added) return added.error();
        if (added->outcome != catalog::add_outcome::conflict && pending->in_same_commit) {
            if (auto also = pending->in_same_commit(db); !also) return also.error();
        }
        pending->added = std::move(*added);
        return pending->added->outcome == catalog::add_outcome::created ? pending->added->file.project : std::string();
    };
    commit.done = [this, pending, done = std::move(done)](result<void> committed) {
        answer(*pending, std::move(committed), done);
    };
    commits_.submit(std::move(commit));
}

void ingester::answer(pending_add& pending, result<void> committed, const ingest_completion& done) {
    const std::string& filename = pending.row.file.filename;
    const std::string& sha256 = pending.row.file.sha256;
    const bool keep = committed && pending.added && pending.added->outcome != catalog::add_outcome::conflict;
    // Ours, and only when no row (committed meanwhile or before) references the bytes.
    if (!keep && pending.put_by_us) release_or_leave_claim(sha256, pending.claim);
    pending.drop_files();
    if (!committed) return done(about(filename, committed.error()));
    if (!pending.added) return done(make_error(error_kind::internal, filename + ": committed without an outcome"));
    auto& added = *pending.added;
    switch (added.outcome) {
        case catalog::add_outcome::created: return done(ingest_result{ingest_outcome::created, std::move(added.file)});
        case catalog::add_outcome::identical: return done(ingest_result{ingest_outcome::identical, std::move(added.file)});
        case catalog::add_outcome::conflict: return done(conflict_error(filename, added.file.sha256, sha256));
    }
}

result<ingest_result> ingester::ingest_file(const std::filesystem::path& path, const ingest_options& options) {
    const auto filename = path.filename().string();
    std::error_code failure;
    if (!std::filesystem::is_regular_file(path, failure)) {
        return make_error(error_kind::invalid, path.string() + ": not a regular file");
    }
    // A name already taken is settled by hashing the file where it lies: re-running over a
    // tree of GiBs then writes nothing. Only a new file is copied (and hashed again from the
    // copy, so what is stored is what was checked).
    auto existing = catalog_.find_file(filename);
    if (!existing) return about(filename, existing.error());
    if (*existing) {
        auto digests = hash_file(path, options.expected, options.max_file_size);
        if (!digests) return about(filename, digests.error());
        if (auto matches = check_expected(options.expected, *digests); !matches) return about(filename, matches.error());
        if ((*existing)->sha256 != digests->sha256) return conflict_error(filename, (*existing)->sha256, digests->sha256);
        return ingest_result{ingest_outcome::identical, std::move(**existing)};
    }
    auto spool = store_.create_spool();
    if (!spool) return about(filename, spool.error());
    std::filesystem::copy_file(path, spool->path(), std::filesystem::copy_options::overwrite_existing, failure);
    if (failure) {
        return make_error(error_kind::internal, "copying " + path.string() + " to " + spool->path().string() + ": " +
                                                    failure.message());
    }
    return ingest_spool(std::move(spool).value(), filename, options);
}

result<std::optional<ingest_result>> ingester::find_existing(std::string_view filename, std::string_view sha256) {
    auto existing = catalog_.find_file(filename);
    if (!existing) return about(filename, existing.error());
    if (!*existing) return std::optional<ingest_result>{};
    if ((*existing)->sha256 != sha256) return conflict_error(filename, (*existing)->sha256, sha256);
    return std::optional<ingest_result>{ingest_result{ingest_outcome::identical, std::move(**existing)}};
}

result<ingest_result> ingester::register_remote(const pep427::wheel_filename& wheel, const validated_wheel& validated,
                                                const remote_file& remote) {
    return register_remote_row(make_file_record(wheel, validated, remote.sha256, remote.size, remote.uploaded_by),
                               std::string(validated.metadata.name()), validated.archive.metadata, remote);
}

result<ingest_result> ingester::register_remote(const pep625::sdist_filename& sdist, const validated_sdist& validated,
                                                const remote_file& remote) {
    auto file = make_file_record(sdist, validated, remote.sha256, remote.size, remote.uploaded_by);
    std::string metadata = file.metadata_sha256.empty() ? std::string() : validated.archive.pkg_info;
    return register_remote_row(std::move(file), std::string(validated.metadata.name()), std::move(metadata), remote);
}

result<ingest_result> ingester::register_remote_row(catalog::file_record file, std::string display_name,
                                                    std::string metadata, const remote_file& remote) {
    const std::string filename = file.filename;
    auto existing = find_existing(filename, remote.sha256);
    if (!existing) return existing.error();
    if (*existing) return std::move(**existing);
    if (auto open = check_takes_files(catalog_, file.project); !open) return about(filename, open.error());

    auto pending = std::make_shared<pending_add>();
    auto& row = pending->row;
    row.file = std::move(file);
    row.file.mode = remote.mode;
    row.file.remote_url = remote.url;
    row.file.fetch_url = remote.fetch_url;
    row.project_display_name = std::move(display_name);
    pending->metadata = std::move(metadata);
    pending->in_same_commit = remote.in_same_commit;
    if (auto stored = put_files(*pending); !stored) {
        pending->drop_files();
        return about(filename, stored.error());
    }
    return wait_for([&](ingest_completion done) { submit(std::move(pending), std::move(done)); });
}

void ingester::release_or_leave_claim(std::string_view sha256, storage::spool_file& claim) {
    auto released = catalog_.release_blob(sha256, [&] { return store_.remove(sha256); });
    if (!released && claim.owns()) (void)claim.release();
}

result<catalog::file_record> ingester::delete_file(std::string_view filename, std::string_view actor) {
    // A claim on the bytes before the row goes: should this process die, or the bucket fail,
    // between the row's deletion and the bytes', the next start's sweep takes them out.
    auto row = catalog_.find_file(filename);
    if (!row) return row.error();
    storage::spool_file claim;
    std::string claimed;
    if (*row) {
        auto made = store_.claim_blob((*row)->sha256);
        if (!made) return made.error();
        claim = std::move(*made);
        claimed = (*row)->sha256;
    }
    auto removed = catalog_.delete_file(filename, actor);
    if (!removed) return removed.error();
    if (removed->sha256 != claimed) {  // replaced between the look and the deletion
        auto made = store_.claim_blob(removed->sha256);
        if (made) claim = std::move(*made);
    }
    release_or_leave_claim(removed->sha256, claim);
    return removed;
}

result<storage::sweep_report> ingester::recover() {
    return store_.sweep_spool([this](std::string_view sha256) -> result<bool> {
        auto released = catalog_.release_blob(sha256, [&] { return store_.remove(sha256); });
        if (!released || *released) return released;
        // A row keeps the bytes; a put of them the dead run began may have left pieces all the same.
        if (auto forgotten = store_.forget_unfinished_puts(sha256); !forgotten) return forgotten.error();
        return false;
    });
}

}  // namespace wheelhouse::ingest
