#include "wheelhouse/backup/backup_folder.hpp"

#include <algorithm>
#include <chrono>
#include <fstream>
#include <iterator>
#include <optional>
#include <set>

#include "wheelhouse/catalog/catalog.hpp"
#include "wheelhouse/catalog/records.hpp"
#include "wheelhouse/catalog/row_columns.hpp"
#include "wheelhouse/render/simple_pages.hpp"
#include "wheelhouse/sqlite/connection.hpp"
#include "wheelhouse/storage/blob_store.hpp"
#include "wheelhouse/storage/blob_path.hpp"
#include "wheelhouse/storage/file_copy.hpp"
#include "wheelhouse/storage/staging_dir.hpp"

namespace wheelhouse::backup {
namespace {

constexpr std::uint64_t max_manifest_size = 256ULL << 20;

// What the copy's rows need from the blob store, one entry per blob.
struct blob_use {
    std::string sha256;
    bool required = false;               // some row serves it from the blob store (local)
    std::string metadata_sha256;         // of its .metadata; empty when no row knows one
    std::string filename;                // one row that uses it, for messages
    std::uint64_t size = 0;
};

// The columns of a file row that say what it needs of the blob store.
constexpr auto blob_columns =
    sqlite::pick(catalog::file_columns, {"sha256", "download_mode", "metadata_sha256", "filename", "size"});

result<std::vector<blob_use>> blobs_used(const std::filesystem::path& database, std::int64_t& rows) {
    auto db = sqlite::connection::open(database, {.read_only = true, .create = false});
    if (!db) return db.error();
    auto query = db->prepare("SELECT " + sqlite::column_list(blob_columns) + " FROM blob_rows ORDER BY sha256, filename");
    if (!query) return query.error();
    std::vector<blob_use> uses;
    rows = 0;
    for (;;) {
        auto row = query->step();
        if (!row) return row.error();
        if (!*row) break;
        ++rows;
        catalog::file_record file;
        sqlite::read_columns(*query, 0, blob_columns, file);
        if (uses.empty() || uses.back().sha256 != file.sha256) uses.push_back({file.sha256, false, {}, file.filename, file.size});
        auto& use = uses.back();
        if (file.mode == catalog::download_mode::local) use.required = true;
        if (use.metadata_sha256.empty()) use.metadata_sha256 = std::move(file.metadata_sha256);
    }
    return uses;
}

std::string now_iso8601() {
    const auto now = std::chrono::duration_cast<std::chrono::milliseconds>(
        std::chrono::system_clock::now().time_since_epoch());
    return render::iso8601_utc(now.count());
}

result<void> make_folder_of(const std::filesystem::path& target, std::set<std::filesystem::path>& folders) {
    std::error_code failure;
    std::filesystem::create_directories(target.parent_path(), failure);
    if (failure) {
        return make_error(error_kind::internal,
                          "creating the folder " + target.parent_path().string() + ": " + failure.message());
    }
    folders.insert(target.parent_path());
    return {};
}

// Copies one file of the blob store into `root` at `relative`, creating its folders.
result<storage::file_digest> copy_into(const std::filesystem::path& source, const std::filesystem::path& root,
                                       const std::string& relative, std::set<std::filesystem::path>& folders) {
    std::error_code failure;
    if (!std::filesystem::exists(source, failure))  // no empty folders in the backup for what is missing
        return make_error(error_kind::not_found, "no file " + source.string());
    if (auto made = make_folder_of(root / relative, folders); !made) return made.error();
    return storage::copy_file_hashed(source, root / relative, 0444);
}

// The same for a blob the bucket holds; a missing object is not_found as a missing file is.
result<storage::file_digest> copy_from_bucket(storage::object_store& bucket, const blob_use& use,
                                              const std::filesystem::path& root, const std::string& relative,
                                              std::set<std::filesystem::path>& folders) {
    if (auto made = make_folder_of(root / relative, folders); !made) return made.error();
    return bucket.copy_out(use.sha256, use.size, root / relative, 0444);
}

// The bucket DATA/bucket records (empty: none). The bucket given must be that one, and --blobs
// needs it when there is one.
result<std::string> checked_bucket(const std::filesystem::path& data_dir, const backup_options& options) {
    auto recorded = storage::recorded_bucket(data_dir);
    if (!recorded) return recorded.error();
    const std::string given = options.bucket ? options.bucket->describe() : "";
    if (*recorded == given || (!options.bucket && !options.include_blobs)) return recorded;
    if (recorded->empty())
        return invalid("leave out the --s3-* settings: this data folder's files are under its blobs/, not in " + given);
    if (!options.bucket) {
        return invalid("give the bucket's --s3-endpoint, --s3-bucket and --s3-prefix with --blobs: this data "
                       "folder's files are in " + *recorded);
    }
    return invalid("give the --s3-* settings of " + *recorded + ", where this data folder's files are, not " + given);
}

result<void> sync_folders(const std::set<std::filesystem::path>& folders) {
    for (const auto& folder : folders) {
        if (auto synced = storage::sync_directory(folder); !synced) return synced.error();
    }
    return {};
}

// Copies what the rows use into the backup, noting each file in the manifest; what the data
// folder lacks or holds corrupt becomes a warning, and any other failure ends the backup.
struct backup_copier {
    const std::filesystem::path& data_dir;
    const std::filesystem::path& root;
    storage::object_store* bucket;
    std::set<std::filesystem::path>& folders;
    manifest& contents;
    backup_report& report;

    result<void> wheel(const blob_use& use) {
        const auto relative = storage::relative_blob_path(use.sha256);
        const bool from_bucket = use.required && bucket;
        auto blob = from_bucket ? copy_from_bucket(*bucket, use, root, relative, folders)
                                : copy_into(data_dir / relative, root, relative, folders);
        const std::string where = from_bucket ? "the bucket" : "the data folder";
        std::error_code ignored;
        if (blob && blob->sha256 != use.sha256) {
            std::filesystem::remove(root / relative, ignored);
            report.warnings.push_back("the blob of " + use.filename + " is corrupt in " + where +
                                      " (its bytes hash to " + blob->sha256 + "); left out");
        } else if (blob) {
            contents.blobs.push_back({relative, blob->sha256, blob->size});
            report.bytes += blob->size;
            ++report.blobs;
        } else if (blob.error().kind == error_kind::conflict) {
            report.warnings.push_back("the blob of " + use.filename + " is corrupt in " + where + " (" +
                                      blob.error().message + "); left out");
        } else if (blob.error().kind != error_kind::not_found) {
            return blob.error();
        } else if (use.required) {
            report.warnings.push_back("the blob of " + use.filename + " (" + use.sha256 + ") is missing from " + where +
                                      " (or was deleted since the snapshot)");
        }
        return {};
    }

    result<void> metadata(const blob_use& use) {
        if (use.metadata_sha256.empty()) return {};
        const auto relative = storage::relative_blob_path(use.sha256) + ".metadata";
        auto copied = copy_into(data_dir / relative, root, relative, folders);
        std::error_code ignored;
        if (copied && copied->sha256 != use.metadata_sha256) {
            std::filesystem::remove(root / relative, ignored);
            report.warnings.push_back("the METADATA of " + use.filename + " is corrupt in the data folder; left out");
        } else if (copied) {
            contents.blobs.push_back({relative, copied->sha256, copied->size});
            report.bytes += copied->size;
            ++report.metadata_files;
        } else if (copied.error().kind != error_kind::not_found) {
            return copied.error();
        } else {
            report.warnings.push_back("the METADATA of " + use.filename + " is missing from the data folder");
        }
        return {};
    }
};

}  // namespace

result<backup_report> create_backup(const std::filesystem::path& data_dir, const std::filesystem::path& out,
                                    const backup_options& options) {
    const auto source = data_dir / catalog_name;
    std::error_code failure;
    if (!std::filesystem::is_regular_file(source, failure)) {
        return make_error(error_kind::not_found,
                          "no catalog at " + source.string() + "; --data must name a wheelhouse data folder");
    }
    auto recorded = checked_bucket(data_dir, options);
    if (!recorded) return recorded.error();
    // The METADATA of a folder whose files are in a bucket is nowhere else: always copied.
    const bool copy_metadata = options.include_blobs || !recorded->empty();
    auto staging = storage::staging_dir::create(out);
    if (!staging) return staging.error();
    const auto& root = staging->path();

    backup_report report;
    report.location = staging->target();
    auto copied = copy_database(source, root / catalog_name, options.copy);
    if (!copied) return copied.error();
    report.database = *copied;

    manifest contents;
    contents.created = now_iso8601();
    contents.schema_version = copied->schema_version;
    contents.includes_blobs = options.include_blobs;
    auto catalog_digest = storage::hash_file(root / catalog_name);
    if (!catalog_digest) return catalog_digest.error();
    contents.catalog = {std::string(catalog_name), catalog_digest->sha256, catalog_digest->size};
    report.bytes = catalog_digest->size;

    auto uses = blobs_used(root / catalog_name, contents.file_rows);
    if (!uses) return uses.error();
    report.file_rows = contents.file_rows;

    std::set<std::filesystem::path> folders{root};
    if (copy_metadata) {
        backup_copier copier{data_dir, root, options.bucket, folders, contents, report};
        for (const auto& use : *uses) {
            if (options.include_blobs) {
                if (auto wheel = copier.wheel(use); !wheel) return wheel.error();
            }
            if (auto metadata = copier.metadata(use); !metadata) return metadata.error();
        }
        std::sort(contents.blobs.begin(), contents.blobs.end(),
                  [](const manifest_entry& a, const manifest_entry& b) { return a.path < b.path; });
    }
    if (auto synced = sync_folders(folders); !synced) return synced.error();
    // Last: a folder without manifest.json is not a backup.
    if (auto written = storage::write_new_file(root / manifest_name, to_json(contents), 0444); !written)
        return written.error();
    if (auto synced = storage::sync_directory(root); !synced) return synced.error();
    if (auto committed = staging->commit(); !committed) return committed.error();
    return report;
}

result<manifest> read_manifest(const std::filesystem::path& backup_dir) {
    std::error_code failure;
    if (!std::filesystem::is_directory(backup_dir, failure)) {
        return invalid(backup_dir.string() + " is not a folder; a wheelhouse backup is the folder `wheelhouse backup` wrote");
    }
    const auto path = backup_dir / manifest_name;
    const auto size = std::filesystem::file_size(path, failure);
    if (failure) {
        return invalid(backup_dir.string() + " is not a finished wheelhouse backup: it has no " +
                       std::string(manifest_name) + " (a backup that was cut off before its end has none)");
    }
    if (size > max_manifest_size) return invalid(path.string() + " is too large to be a manifest");
    std::ifstream in(path, std::ios::binary);
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (!in && !in.eof()) return make_error(error_kind::internal, "cannot read " + path.string());
    auto parsed = parse_manifest(text);
    if (!parsed) return invalid(backup_dir.string() + "/" + parsed.error().message);
    return parsed;
}

result<restore_report> restore_backup(const std::filesystem::path& backup_dir, const std::filesystem::path& data_dir) {
    auto contents = read_manifest(backup_dir);
    if (!contents) return contents.error();
    auto staging = storage::staging_dir::create(data_dir);
    if (!staging) return staging.error();
    const auto& root = staging->path();

    restore_report report;
    report.location = staging->target();
    std::set<std::filesystem::path> folders{root};
    const auto restore_one = [&](const manifest_entry& entry, unsigned mode) -> result<void> {
        const auto source = backup_dir / entry.path;
        const auto target = root / entry.path;
        if (auto made = make_folder_of(target, folders); !made) return made.error();
        auto copied = storage::copy_file_hashed(source, target, mode);
        if (!copied) {
            if (copied.error().kind == error_kind::not_found)
                return invalid("the backup is incomplete: " + source.string() + " is listed in its manifest but missing");
            return copied.error();
        }
        if (copied->size != entry.size || copied->sha256 != entry.sha256) {
            return invalid("the backup is corrupt: " + source.string() + " has " + std::to_string(copied->size) +
                           " bytes with sha256 " + copied->sha256 + ", its manifest says " + std::to_string(entry.size) +
                           " bytes with sha256 " + entry.sha256 +
                           (copied->size < entry.size ? " (it was cut short)" : ""));
        }
        report.bytes += copied->size;
        return {};
    };

    if (auto restored = restore_one(contents->catalog, 0644); !restored) return restored.error();
    if (auto checked = check_database(root / catalog_name); !checked)
        return invalid("the backup's catalog is damaged: " + checked.error().message);
    for (const auto& entry : contents->blobs) {
        if (auto restored = restore_one(entry, 0444); !restored) return restored.error();
    }
    {
        // Brings an older backup's schema up to date and switches the catalog to WAL, now
        // rather than at the server's start, so a catalog this binary cannot use is refused here.
        auto opened = catalog::catalog::open(root / catalog_name);
        if (!opened) return invalid("the backup's catalog cannot be used: " + opened.error().message);
    }
    if (auto synced = sync_folders(folders); !synced) return synced.error();
    if (auto committed = staging->commit(); !committed) return committed.error();
    report.contents = std::move(contents).value();
    return report;
}

}  // namespace wheelhouse::backup
