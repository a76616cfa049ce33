#include "wheelhouse/ingest/ingester.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <array>
#include <cctype>
#include <system_error>
#include <utility>
#include <vector>

#include "wheelhouse/crypto/hasher.hpp"
#include "wheelhouse/ingest/file_record.hpp"
#include "wheelhouse/ingest/wheel_validation.hpp"
#include "wheelhouse/pep427/wheel_filename.hpp"
#include "wheelhouse/variants/build_variant.hpp"

namespace wheelhouse::ingest {
namespace {

// How often an add is retried when a concurrent delete removed the shared blob in between.
constexpr int put_attempts = 3;

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
    const int descriptor = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (descriptor < 0) {
        return make_error(error_kind::internal, "opening " + path.string() + ": " + std::system_category().message(errno));
    }
    struct closer {
        int descriptor;
        ~closer() { ::close(descriptor); }
    } close_at_end{descriptor};

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
        const ssize_t count = ::read(descriptor, buffer.data(), buffer.size());
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

std::string lower(std::string_view text) {
    std::string out(text);
    for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return out;
}

result<void> check_expected(const expected_digests& expected, const file_digests& actual) {
    const std::array<std::tuple<const char*, const std::optional<std::string>*, const std::optional<std::string>*>, 2> others = {{
        {"blake2_256_digest", &expected.blake2_256, &actual.blake2_256},
        {"md5_digest", &expected.md5, &actual.md5},
    }};
    if (expected.sha256 && lower(*expected.sha256) != actual.sha256) {
        return invalid("the upload's sha256_digest is " + *expected.sha256 + " but the file received hashes to " +
                       actual.sha256 + "; it was damaged or truncated on the way: upload it again");
    }
    for (const auto& [field, sent, computed] : others) {
        if (*sent && lower(**sent) != **computed) {
            return invalid(std::string("the upload's ") + field + " is " + **sent + " but the file received hashes to " +
                           **computed + "; it was damaged or truncated on the way: upload it again");
        }
    }
    return {};
}

error conflict_error(std::string_view filename, std::string_view existing_sha256, std::string_view new_sha256) {
    return make_error(error_kind::conflict,
                      "File already exists: " + std::string(filename) + " is in the index with sha256 " +
                          std::string(existing_sha256) + ", and this file's sha256 is " + std::string(new_sha256) +
                          ". A filename is never reused for other bytes: give the build a new version or build "
                          "tag, or delete the old file first");
}

error about(std::string_view filename, const error& failure) {
    return make_error(failure.kind, std::string(filename) + ": " + failure.message);
}

// The spool's digests: what was computed as the bytes arrived, plus a pass over the file only
// for digests the client sent that were not (twine's blake2_256 and md5).
result<file_digests> spool_digests(const std::filesystem::path& path, const ingest_options& options) {
    if (!options.received) return hash_file(path, options.expected, options.max_file_size);
    if (options.received->size > options.max_file_size) {
        return make_error(error_kind::too_large, "the file is larger than the limit of " +
                                                     std::to_string(options.max_file_size) + " bytes");
    }
    file_digests digests;
    if (options.expected.blake2_256 || options.expected.md5) {
        auto others = hash_file(path, options.expected, options.max_file_size, false);
        if (!others) return others.error();
        digests = std::move(*others);
    }
    digests.sha256 = options.received->sha256;
    digests.size = options.received->size;
    return digests;
}

}  // namespace

result<ingest_result> ingester::ingest_spool(storage::spool_file spool, std::string_view filename,
                                             const ingest_options& options) {
    auto wheel = pep427::parse_wheel_filename(filename);
    if (!wheel) return about(filename, wheel.error());

    auto digests = spool_digests(spool.path(), options);
    if (!digests) return about(filename, digests.error());
    if (auto matches = check_expected(options.expected, *digests); !matches) return about(filename, matches.error());

    // A re-upload of the same bytes, or a clash, is answered before the costly validation.
    auto existing = catalog_.find_file(filename);
    if (!existing) return about(filename, existing.error());
    if (*existing) {
        if ((*existing)->sha256 != digests->sha256) return conflict_error(filename, (*existing)->sha256, digests->sha256);
        return ingest_result{ingest_outcome::identical, std::move(**existing)};
    }

    // PEP 792: archived and quarantined projects take no new files.
    auto project = catalog_.find_project(wheel->normalized_name);
    if (!project) return about(filename, project.error());
    if (*project && ((*project)->status == catalog::project_status::archived ||
                     (*project)->status == catalog::project_status::quarantined)) {
        return about(filename, make_error(error_kind::forbidden,
                                          "project '" + wheel->normalized_name + "' is " +
                                              std::string(catalog::to_string((*project)->status)) +
                                              " and takes no new files; an admin can set it active again"));
    }

    auto validated = validate_wheel(spool.path(), *wheel, options.limits);
    if (!validated) return about(filename, validated.error());

    catalog::new_file row;
    row.file = make_file_record(*wheel, *validated, digests->sha256, digests->size, options.uploaded_by);
    row.project_display_name = std::string(validated->metadata.name());
    const std::string& sha256 = row.file.sha256;

    for (int attempt = 1;; ++attempt) {
        auto blob = store_.put_blob(sha256, spool.path());
        if (!blob) return about(filename, blob.error());
        bool put_by_us = *blob == storage::put_outcome::created;
        auto metadata = store_.put_metadata(sha256, validated->archive.metadata);
        if (metadata) put_by_us = put_by_us || *metadata == storage::put_outcome::created;

        // Under the catalog's write lock: the bytes must still be there (a delete of another
        // file with the same bytes may have released them since).
        bool vanished = false;
        auto added = [&]() -> result<catalog::add_result> {
            if (!metadata) return metadata.error();
            return catalog_.add_file(row, [&]() -> result<void> {
                if (store_.has_blob(sha256) && store_.has_metadata(sha256)) return {};
                vanished = true;
                return make_error(error_kind::unavailable, "the blob " + sha256 + " was removed while it was being added");
            });
        }();

        const bool keep = added && added->outcome != catalog::add_outcome::conflict;
        if (!keep && put_by_us) {
            // Ours, and nothing references it: take it back out. A failure here leaves an
            // unreferenced blob, which is harmless.
            (void)catalog_.release_blob(sha256, [&] { return store_.remove(sha256); });
        }
        if (!added) {
            if (vanished && attempt < put_attempts) continue;
            return about(filename, added.error());
        }
        switch (added->outcome) {
            case catalog::add_outcome::created: return ingest_result{ingest_outcome::created, std::move(added->file)};
            case catalog::add_outcome::identical: return ingest_result{ingest_outcome::identical, std::move(added->file)};
            case catalog::add_outcome::conflict: return conflict_error(filename, added->file.sha256, sha256);
        }
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
    const std::string& filename = wheel.filename;
    auto existing = find_existing(filename, remote.sha256);
    if (!existing) return existing.error();
    if (*existing) return std::move(**existing);

    auto project = catalog_.find_project(wheel.normalized_name);
    if (!project) return about(filename, project.error());
    if (*project && ((*project)->status == catalog::project_status::archived ||
                     (*project)->status == catalog::project_status::quarantined)) {
        return about(filename, make_error(error_kind::forbidden,
                                          "project '" + wheel.normalized_name + "' is " +
                                              std::string(catalog::to_string((*project)->status)) +
                                              " and takes no new files; an admin can set it active again"));
    }

    catalog::new_file row;
    row.file = make_file_record(wheel, validated, remote.sha256, remote.size, remote.uploaded_by);
    row.file.mode = remote.mode;
    row.file.remote_url = remote.url;
    row.file.fetch_url = remote.fetch_url;
    row.project_display_name = std::string(validated.metadata.name());
    const std::string& sha256 = row.file.sha256;

    for (int attempt = 1;; ++attempt) {
        auto metadata = store_.put_metadata(sha256, validated.archive.metadata);
        if (!metadata) return about(filename, metadata.error());
        const bool put_by_us = *metadata == storage::put_outcome::created;
        bool vanished = false;
        auto added = catalog_.add_file(row, [&]() -> result<void> {
            if (store_.has_metadata(sha256)) return {};
            vanished = true;
            return make_error(error_kind::unavailable, "the METADATA of " + sha256 + " was removed while it was being added");
        });
        const bool keep = added && added->outcome != catalog::add_outcome::conflict;
        if (!keep && put_by_us) {
            // Only when no row (local or remote) references these bytes.
            (void)catalog_.release_blob(sha256, [&] { return store_.remove(sha256); });
        }
        if (!added) {
            if (vanished && attempt < put_attempts) continue;
            return about(filename, added.error());
        }
        switch (added->outcome) {
            case catalog::add_outcome::created: return ingest_result{ingest_outcome::created, std::move(added->file)};
            case catalog::add_outcome::identical: return ingest_result{ingest_outcome::identical, std::move(added->file)};
            case catalog::add_outcome::conflict: return conflict_error(filename, added->file.sha256, sha256);
        }
    }
}

result<catalog::file_record> ingester::delete_file(std::string_view filename, std::string_view actor) {
    auto removed = catalog_.delete_file(filename, actor);
    if (!removed) return removed.error();
    const std::string sha256 = removed->sha256;
    // The row is gone, which is what was asked; should the bytes stay behind after a failure
    // here, an unreferenced blob harms nothing.
    (void)catalog_.release_blob(sha256, [&] { return store_.remove(sha256); });
    return removed;
}

result<storage::sweep_report> ingester::recover() {
    return store_.sweep_spool([this](std::string_view sha256) {
        return catalog_.release_blob(sha256, [&] { return store_.remove(sha256); });
    });
}

}  // namespace wheelhouse::ingest
