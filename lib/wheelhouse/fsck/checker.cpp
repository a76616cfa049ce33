#include "wheelhouse/fsck/checker.hpp"

#include <sys/stat.h>

#include <map>
#include <set>
#include <system_error>

#include "wheelhouse/catalog/audit.hpp"
#include "wheelhouse/catalog/catalog.hpp"
#include "wheelhouse/catalog/row_columns.hpp"
#include "wheelhouse/crypto/hasher.hpp"
#include "wheelhouse/ingest/sdist_archive.hpp"
#include "wheelhouse/ingest/wheel_archive.hpp"
#include "wheelhouse/storage/blob_path.hpp"
#include "wheelhouse/storage/blob_store.hpp"
#include "wheelhouse/storage/file_copy.hpp"

namespace wheelhouse::fsck {
namespace {

constexpr std::string_view actor = "fsck";

// What the catalog's rows say about one blob.
struct blob_rows {
    std::vector<std::string> filenames;        // every row with these bytes
    std::vector<std::string> local_filenames;  // those served from the store
    std::string metadata_sha256;               // empty when no row knows it
    std::uint64_t size = 0;
};

// The columns of a file row that say what it needs of the store.
constexpr auto blob_columns =
    sqlite::pick(catalog::file_columns, {"sha256", "filename", "download_mode", "metadata_sha256", "size"});

result<std::map<std::string, blob_rows>> read_rows(catalog::catalog& catalog, std::size_t& count) {
    std::map<std::string, blob_rows> rows;
    count = 0;
    auto read = catalog.read_snapshot([&](sqlite::connection& db) -> result<void> {
        auto query = db.prepare("SELECT " + sqlite::column_list(blob_columns) + " FROM blob_rows ORDER BY filename");
        if (!query) return query.error();
        for (;;) {
            auto row = query->step();
            if (!row) return row.error();
            if (!*row) return {};
            ++count;
            catalog::file_record file;
            sqlite::read_columns(*query, 0, blob_columns, file);
            auto& entry = rows[file.sha256];
            if (file.mode == catalog::download_mode::local) entry.local_filenames.push_back(file.filename);
            entry.filenames.push_back(std::move(file.filename));
            if (entry.metadata_sha256.empty()) entry.metadata_sha256 = std::move(file.metadata_sha256);
            entry.size = file.size;
        }
    });
    if (!read) return read.error();
    return rows;
}

struct store_files {
    std::set<std::string> blobs;
    std::set<std::string> metadata;
    std::vector<std::filesystem::path> strays;
    std::map<std::string, std::uint64_t> objects;  // the bucket's blobs and their sizes, when there is one
};

result<store_files> walk_store(const storage::blob_store& store) {
    store_files found;
    const auto root = store.data_dir() / "blobs";
    std::error_code failure;
    std::filesystem::recursive_directory_iterator walk(root, failure);
    for (; !failure && walk != std::filesystem::recursive_directory_iterator(); walk.increment(failure)) {
        if (walk->is_directory(failure)) continue;
        const auto relative = walk->path().lexically_relative(store.data_dir()).generic_string();
        const auto parts = storage::parse_blob_path(relative);
        if (!parts || !walk->is_regular_file(failure)) {
            found.strays.push_back(walk->path());
            continue;
        }
        (parts->metadata ? found.metadata : found.blobs).insert(parts->sha256);
    }
    if (failure && failure != std::errc::no_such_file_or_directory)
        return make_error(error_kind::internal, "reading " + root.string() + ": " + failure.message());
    if (auto* bucket = store.bucket()) {
        auto listed = bucket->list([&](std::string_view sha256, std::uint64_t size) -> result<void> {
            found.objects.emplace(sha256, size);
            return {};
        });
        if (!listed) return listed.error();
    }
    return found;
}

// METADATA again from the wheel itself (an sdist's PKG-INFO), when the blob is sound and it hashes
// as the row says.
result<void> rewrite_metadata(const storage::blob_store& store, const std::string& sha256, const std::string& expected) {
    std::string metadata;
    if (auto wheel = ingest::read_wheel_archive(store.blob_path(sha256))) {
        metadata = std::move(wheel->metadata);
    } else if (auto sdist = ingest::read_sdist_archive(store.blob_path(sha256))) {
        metadata = std::move(sdist->pkg_info);
    } else {
        return wheel.error();
    }
    const auto digest = crypto::sha256_hex(metadata);
    if (digest != expected) {
        return invalid("the file's own METADATA hashes to " + digest + ", not to the row's metadata_sha256 " + expected);
    }
    auto put = store.put_metadata(sha256, metadata);
    if (!put) return put.error();
    return {};
}

// How a problem names a blob in the bucket: "bucket/blobs/sha256/ab/cd/<sha256>".
std::filesystem::path bucket_path(std::string_view sha256) {
    return std::filesystem::path("bucket") / storage::relative_blob_path(sha256);
}

std::string first_of(const std::vector<std::string>& names) { return names.empty() ? std::string() : names.front(); }

}  // namespace

std::string_view to_string(problem_kind kind) noexcept {
    switch (kind) {
        case problem_kind::missing_blob: return "missing blob";
        case problem_kind::orphan_blob: return "orphan blob";
        case problem_kind::corrupt_blob: return "corrupt blob";
        case problem_kind::missing_metadata: return "missing metadata";
        case problem_kind::orphan_metadata: return "orphan metadata";
        case problem_kind::corrupt_metadata: return "corrupt metadata";
        case problem_kind::stray_file: return "stray file";
    }
    return "problem";
}

std::size_t fsck_report::unfixed() const noexcept {
    std::size_t count = 0;
    for (const auto& found : problems) count += found.fixed ? 0 : 1;
    return count;
}

namespace {

// One run of check(): the snapshot's rows and the store's files, compared pass by pass (stray
// files, blobs, METADATA files, then rows), each pass adding its problems to the report.
class checker {
public:
    checker(catalog::catalog& catalog, const storage::blob_store& store, const fsck_options& options,
            std::map<std::string, blob_rows> rows, store_files found, fsck_report& report)
        : catalog_(catalog), store_(store), options_(options), rows_(std::move(rows)), found_(std::move(found)),
          report_(report) {}

    result<void> run() {
        for (const auto& path : found_.strays) {
            if (auto done = check_stray(path); !done) return done.error();
        }
        for (const auto& sha256 : found_.blobs) {
            if (auto done = check_blob(sha256); !done) return done.error();
        }
        for (const auto& [sha256, size] : found_.objects) {
            if (auto done = check_object(sha256, size); !done) return done.error();
        }
        for (const auto& sha256 : found_.metadata) {
            if (auto done = check_metadata_file(sha256); !done) return done.error();
        }
        for (const auto& [sha256, row] : rows_) {
            if (auto done = check_row(sha256, row); !done) return done.error();
        }
        return {};
    }

private:
    result<void> remove_unused(problem& entry) {
        auto released = catalog_.release_blob(entry.sha256, [&] { return store_.remove(entry.sha256); });
        if (!released) return released.error();
        entry.fixed = *released;
        entry.action = *released ? "removed" : "kept: a row uses it now";
        return {};
    }

    result<bool> still_unused(const std::string& sha256) {
        auto used = catalog_.references_blob(sha256);  // a row may have come since the snapshot
        if (!used) return used.error();
        return !*used;
    }

    // A blob corrupt (and moved away by --fix) does not count as present.
    bool blob_present(const std::string& sha256) const {
        return found_.blobs.contains(sha256) && !unusable_.contains(sha256);
    }

    // Where a local row's bytes are: the bucket's listing when there is a bucket, else blobs/.
    bool owned_present(const std::string& sha256) const {
        return store_.bucket() != nullptr ? found_.objects.contains(sha256) : blob_present(sha256);
    }

    // An object of the bucket: used by a row, of the row's size and put with its sha256 (which
    // the store checked as the bytes came: x-amz-content-sha256). Its bytes are not read again.
    result<void> check_object(const std::string& sha256, std::uint64_t size) {
        const auto path = bucket_path(sha256);
        const auto row = rows_.find(sha256);
        if (row == rows_.end()) return check_orphan(problem_kind::orphan_blob, sha256, path);
        std::string damage;
        if (size != row->second.size) {
            damage = std::to_string(size) + " bytes where the catalog says " + std::to_string(row->second.size);
        } else if (options_.hash_blobs) {
            auto recorded = store_.bucket()->look_up(sha256);
            if (!recorded) return recorded.error();
            if (*recorded && !(*recorded)->sha256.empty() && (*recorded)->sha256 != sha256)
                damage = "it was put as bytes that hash to " + (*recorded)->sha256;
        }
        if (damage.empty()) return {};
        report_.problems.push_back({problem_kind::corrupt_blob, sha256, first_of(row->second.filenames), path,
                                    std::move(damage), false,
                                    "put the file again with `wheelhouse s3-push` from a sound copy, or delete its row"});
        return {};
    }

    result<void> move_away(problem& entry) {
        auto moved = store_.quarantine(entry.path);
        if (!moved) return moved.error();
        entry.action = "moved to " + moved->string();
        return {};
    }

    result<void> check_stray(const std::filesystem::path& path) {
        problem entry{problem_kind::stray_file, {}, {}, path, "not a blob store name (blobs/sha256/ab/cd/<sha256>)", false,
                      "move it away"};
        if (options_.fix) {
            if (auto moved = move_away(entry); !moved) return moved.error();
            entry.fixed = true;
        }
        report_.problems.push_back(std::move(entry));
        return {};
    }

    // A blob or METADATA file without a row in the snapshot, unless one has come since.
    result<void> check_orphan(problem_kind kind, const std::string& sha256, const std::filesystem::path& path) {
        auto unused = still_unused(sha256);
        if (!unused) return unused.error();
        if (!*unused) return {};
        // METADATA beside an orphan blob is that blob's problem, and goes with it.
        if (kind == problem_kind::orphan_metadata && found_.blobs.contains(sha256)) return {};
        problem entry{kind, sha256, {}, path, "no catalog row uses it", false, "remove it with --fix"};
        if (options_.fix) {
            if (auto removed = remove_unused(entry); !removed) return removed.error();
        }
        report_.problems.push_back(std::move(entry));
        return {};
    }

    // What is wrong with the blob's bytes: empty when nothing (or when hashing is off, its size).
    result<std::string> blob_damage(const std::string& sha256, const std::filesystem::path& path, const blob_rows& row) {
        std::error_code failure;
        const auto size = std::filesystem::file_size(path, failure);
        if (failure) return make_error(error_kind::internal, "reading " + path.string() + ": " + failure.message());
        if (size != row.size) return std::to_string(size) + " bytes where the catalog says " + std::to_string(row.size);
        if (!options_.hash_blobs) return std::string();
        auto digest = storage::hash_file(path);
        if (!digest) return digest.error();
        report_.bytes_hashed += digest->size;
        return digest->sha256 != sha256 ? "its bytes hash to " + digest->sha256 : std::string();
    }

    result<void> check_blob(const std::string& sha256) {
        const auto path = store_.blob_path(sha256);
        const auto row = rows_.find(sha256);
        if (row == rows_.end()) return check_orphan(problem_kind::orphan_blob, sha256, path);
        auto damage = blob_damage(sha256, path, row->second);
        if (!damage) return damage.error();
        if (damage->empty()) return {};
        problem entry{problem_kind::corrupt_blob, sha256, first_of(row->second.filenames), path, std::move(*damage),
                      false, "--fix moves it to DATA/quarantine/"};
        if (options_.fix) {
            if (auto moved = move_away(entry); !moved) return moved.error();
            entry.fixed = true;
            unusable_.insert(sha256);
        }
        report_.problems.push_back(std::move(entry));
        return {};
    }

    result<void> check_metadata_file(const std::string& sha256) {
        const auto path = store_.metadata_path(sha256);
        const auto row = rows_.find(sha256);
        if (row == rows_.end()) return check_orphan(problem_kind::orphan_metadata, sha256, path);
        const auto& expected = row->second.metadata_sha256;
        if (expected.empty()) return {};  // the row does not say: nothing to compare with
        auto digest = storage::hash_file(path);
        if (!digest) return digest.error();
        if (digest->sha256 == expected) return {};
        problem entry{problem_kind::corrupt_metadata, sha256, first_of(row->second.filenames), path,
                      "it hashes to " + digest->sha256 + ", the row's metadata_sha256 is " + expected, false,
                      "--fix writes it again from the wheel"};
        if (options_.fix) {
            if (auto moved = move_away(entry); !moved) return moved.error();
            if (blob_present(sha256)) {
                auto rewritten = rewrite_metadata(store_, sha256, expected);
                entry.fixed = rewritten.has_value();
                entry.action += rewritten ? "; written again from the wheel"
                                          : "; not written again: " + rewritten.error().message;
            } else {
                entry.action += "; not written again: the wheel's blob is not in the store";
            }
        }
        report_.problems.push_back(std::move(entry));
        return {};
    }

    result<void> check_row(const std::string& sha256, const blob_rows& row) {
        if (!row.local_filenames.empty() && !owned_present(sha256)) return check_missing_blob(sha256, row);
        if (row.metadata_sha256.empty() || found_.metadata.contains(sha256)) return {};
        if (store_.has_metadata(sha256)) return {};  // written since the walk
        return check_missing_metadata(sha256, row);
    }

    result<void> check_missing_blob(const std::string& sha256, const blob_rows& row) {
        // Deleted since the snapshot (row and blob both gone) is no problem.
        auto used = catalog_.references_blob(sha256);
        if (!used) return used.error();
        if (!*used) return {};
        if (store_.bucket() != nullptr) {
            auto present = store_.has_owned(sha256);  // put since the listing
            if (!present) return present.error();
            if (*present) return {};
        } else if (store_.has_blob(sha256) && !unusable_.contains(sha256)) {
            return {};
        }
        problem entry{problem_kind::missing_blob, sha256, first_of(row.local_filenames),
                      store_.bucket() != nullptr ? bucket_path(sha256) : store_.blob_path(sha256),
                      "the wheel's bytes are not in the store", false,
                      "copy the wheel there from a backup (its sha256 is its name), or delete the row with "
                      "--fix --delete-missing-rows"};
        if (options_.fix && options_.delete_missing_rows) {
            for (const auto& filename : row.local_filenames) {
                auto deleted = catalog_.delete_file(filename, actor);
                if (!deleted && deleted.error().kind != error_kind::not_found) return deleted.error();
            }
            // Its METADATA, if left, has no row now (unless a remote row shares the bytes).
            auto released = catalog_.release_blob(sha256, [&] { return store_.remove(sha256); });
            if (!released) return released.error();
            entry.fixed = true;
            entry.action = "deleted the row" + std::string(row.local_filenames.size() == 1 ? "" : "s") + " of " +
                           first_of(row.local_filenames);
        }
        report_.problems.push_back(std::move(entry));
        return {};
    }

    result<void> check_missing_metadata(const std::string& sha256, const blob_rows& row) {
        auto used = catalog_.references_blob(sha256);
        if (!used) return used.error();
        if (!*used) return {};
        problem entry{problem_kind::missing_metadata, sha256, first_of(row.filenames), store_.metadata_path(sha256),
                      "the row has a metadata_sha256 but there is no .metadata file", false,
                      "--fix writes it again from the wheel"};
        if (options_.fix) {
            if (blob_present(sha256)) {
                auto rewritten = rewrite_metadata(store_, sha256, row.metadata_sha256);
                entry.fixed = rewritten.has_value();
                entry.action = rewritten ? "written again from the wheel" : "not written again: " + rewritten.error().message;
            } else {
                entry.action = "not written again: the wheel's blob is not in the store";
            }
        }
        report_.problems.push_back(std::move(entry));
        return {};
    }

    catalog::catalog& catalog_;
    const storage::blob_store& store_;
    const fsck_options& options_;
    const std::map<std::string, blob_rows> rows_;
    const store_files found_;
    fsck_report& report_;
    std::set<std::string> unusable_;  // blobs that turned out corrupt and left the store
};

}  // namespace

result<fsck_report> check(catalog::catalog& catalog, const storage::blob_store& store, const fsck_options& options) {
    fsck_report report;
    auto rows = read_rows(catalog, report.rows);
    if (!rows) return rows.error();
    auto found = walk_store(store);
    if (!found) return found.error();
    report.blobs = found->blobs.size();
    report.bucket_objects = found->objects.size();
    report.metadata_files = found->metadata.size();
    checker pass(catalog, store, options, std::move(*rows), std::move(*found), report);
    if (auto done = pass.run(); !done) return done.error();
    return report;
}

}  // namespace wheelhouse::fsck
