#include <catch2/catch.hpp>

#include <atomic>
#include <functional>
#include <thread>

#include "data_folder.hpp"
#include "wheelhouse/backup/backup_folder.hpp"
#include "wheelhouse/crypto/hasher.hpp"

using namespace wheelhouse;
using namespace wheelhouse::testing;

namespace {

void make_writable(const std::filesystem::path& path) {
    std::filesystem::permissions(path, std::filesystem::perms::owner_write, std::filesystem::perm_options::add);
}

// Every row as text, in filename order: what a restore must give back.
std::vector<std::string> row_texts(const std::filesystem::path& database) {
    auto reader = sqlite::connection::open(database, {.read_only = true});
    REQUIRE(reader);
    auto query = reader->prepare(
        "SELECT filename || '|' || sha256 || '|' || size || '|' || metadata_sha256 || '|' || download_mode "
        "FROM files ORDER BY filename");
    REQUIRE(query);
    std::vector<std::string> rows;
    while (*query->step()) rows.push_back(query->column_text(0));
    return rows;
}

// Leftover temporary folders (".<name>.partial-…") beside `target`.
std::size_t partial_folders(const std::filesystem::path& parent) {
    std::size_t count = 0;
    for (const auto& entry : std::filesystem::directory_iterator(parent))
        count += entry.path().filename().string().find(".partial-") != std::string::npos ? 1 : 0;
    return count;
}

}  // namespace

TEST_CASE("backup: a backup with blobs restores to the same rows, blobs and METADATA", "[backup]") {
    data_folder data;
    const auto first = data.add("flash-attn", "2.8.3+cu128torch2.8", "cp312-cp312-linux_x86_64");
    const auto second = data.add("flash-attn", "2.8.3+cu130torch2.10", "cp312-cp312-linux_x86_64");
    const auto third = data.add("demo", "1.0");
    temp_dir place;

    auto made = backup::create_backup(data.dir.path(), place / "backup", {.include_blobs = true, .copy = {}});
    REQUIRE(made);
    CHECK(made->warnings.empty());
    CHECK(made->file_rows == 3);
    CHECK(made->blobs == 3);
    CHECK(made->metadata_files == 3);
    CHECK(made->database.schema_version >= 2);
    CHECK(std::filesystem::exists(place / "backup" / "manifest.json"));
    CHECK_FALSE(std::filesystem::exists(place / "backup" / "catalog.db-wal"));
    CHECK(partial_folders(place.path()) == 0);

    auto manifest = backup::read_manifest(place / "backup");
    REQUIRE(manifest);
    CHECK(manifest->includes_blobs);
    CHECK(manifest->file_rows == 3);
    CHECK(manifest->blobs.size() == 6);
    CHECK(manifest->catalog.sha256 == crypto::sha256_hex(read_file(place / "backup" / "catalog.db")));

    auto restored = backup::restore_backup(place / "backup", place / "data");
    REQUIRE(restored);
    CHECK(row_texts(place / "data" / "catalog.db") == row_texts(data.dir / "catalog.db"));
    for (const auto* file : {&first, &second, &third}) {
        CHECK(read_file(place / "data" / "blobs" / "sha256" / file->sha256.substr(0, 2) / file->sha256.substr(2, 2) /
                        file->sha256) == read_file(data.store->blob_path(file->sha256)));
        CHECK(read_file(place / "data" / "blobs" / "sha256" / file->sha256.substr(0, 2) / file->sha256.substr(2, 2) /
                        (file->sha256 + ".metadata")) == read_file(data.store->metadata_path(file->sha256)));
    }
    CHECK(partial_folders(place.path()) == 0);
    // The restored catalog opens as a catalog again, in WAL mode.
    auto reopened = catalog::catalog::open(place / "data" / "catalog.db");
    REQUIRE(reopened);
    auto files = (*reopened)->files_of_project("flash-attn");
    REQUIRE(files);
    REQUIRE(files->has_value());
    CHECK((*files)->files.size() == 2);
}

TEST_CASE("backup: without --blobs only the catalog is copied", "[backup]") {
    data_folder data;
    data.add("demo", "1.0");
    temp_dir place;
    auto made = backup::create_backup(data.dir.path(), place / "backup");
    REQUIRE(made);
    CHECK(made->blobs == 0);
    CHECK(count_files(place / "backup") == 2);  // catalog.db, manifest.json
    auto restored = backup::restore_backup(place / "backup", place / "data");
    REQUIRE(restored);
    CHECK_FALSE(restored->contents.includes_blobs);
    CHECK(row_texts(place / "data" / "catalog.db").size() == 1);
}

TEST_CASE("backup: a snapshot taken while another thread keeps ingesting is consistent", "[backup]") {
    data_folder data;
    for (int i = 0; i < 5; ++i) data.add("demo", "1." + std::to_string(i));
    std::atomic<bool> stop{false};
    std::atomic<int> added{0};
    std::atomic<int> failed{0};
    std::thread writer([&] {
        for (int i = 0; !stop && i < 400; ++i) (data.try_add("busy", "2." + std::to_string(i)) ? added : failed)++;
    });
    temp_dir place;
    // Few pages per step, so writes land between the steps.
    backup::backup_options options;
    options.include_blobs = true;
    options.copy.pages_per_step = 1;
    while (added + failed < 3) std::this_thread::yield();
    auto made = backup::create_backup(data.dir.path(), place / "backup", options);
    stop = true;
    writer.join();
    CHECK(failed == 0);
    REQUIRE(made);
    CHECK(made->warnings.empty());
    CHECK(made->file_rows >= 8);
    CHECK(made->file_rows <= data.rows());
    CHECK(made->blobs == static_cast<std::size_t>(made->file_rows));
    auto restored = backup::restore_backup(place / "backup", place / "data");
    REQUIRE(restored);
    CHECK(static_cast<std::int64_t>(row_texts(place / "data" / "catalog.db").size()) == made->file_rows);
}

TEST_CASE("backup: a blob missing from the data folder is a warning, the rest is backed up", "[backup]") {
    data_folder data;
    const auto gone = data.add("demo", "1.0");
    data.add("demo", "1.1");
    std::filesystem::remove(data.store->blob_path(gone.sha256));
    temp_dir place;
    auto made = backup::create_backup(data.dir.path(), place / "backup", {.include_blobs = true, .copy = {}});
    REQUIRE(made);
    REQUIRE(made->warnings.size() == 1);
    CHECK_THAT(made->warnings[0], Catch::Contains(gone.filename) && Catch::Contains("missing"));
    CHECK(made->blobs == 1);
    // Its METADATA is still there, so it is backed up alone.
    const auto folder = place / "backup" / "blobs" / "sha256" / gone.sha256.substr(0, 2) / gone.sha256.substr(2, 2);
    CHECK(count_files(folder) == 1);
    CHECK(std::filesystem::exists(folder / (gone.sha256 + ".metadata")));
    CHECK(made->metadata_files == 2);
}

TEST_CASE("backup: nothing of a blob that is wholly missing appears in the backup, not even its folder", "[backup]") {
    data_folder data;
    const auto gone = data.add("demo", "1.0");
    std::filesystem::remove(data.store->blob_path(gone.sha256));
    std::filesystem::remove(data.store->metadata_path(gone.sha256));
    temp_dir place;
    auto made = backup::create_backup(data.dir.path(), place / "backup", {.include_blobs = true, .copy = {}});
    REQUIRE(made);
    CHECK(made->warnings.size() == 2);
    CHECK_FALSE(std::filesystem::exists(place / "backup" / "blobs"));
}

TEST_CASE("backup: targets it must refuse, leaving nothing behind", "[backup]") {
    data_folder data;
    data.add("demo", "1.0");
    temp_dir place;
    write_file(place / "full" / "something", "x");
    write_file(place / "a-file", "x");

    struct refusal {
        std::string name;
        std::filesystem::path out;
        std::string message;
    };
    const std::vector<refusal> table = {
        {"a folder that is not empty", place / "full", "is not empty"},
        {"a file", place / "a-file", "is not a folder"},
        {"a place under a file", place / "a-file" / "backup", "cannot create the folder"},
        {"an unwritable place (sysfs)", "/sys/wheelhouse-backup-test", "cannot write in /sys"},
    };
    for (const auto& row : table) {
        SECTION(row.name) {
            auto made = backup::create_backup(data.dir.path(), row.out);
            REQUIRE_FALSE(made);
            CHECK_THAT(made.error().message, Catch::Contains(row.message));
            CHECK(partial_folders(place.path()) == 0);
        }
    }
    SECTION("a folder that is not a data folder") {
        auto made = backup::create_backup(place / "nothing-here", place / "backup");
        REQUIRE_FALSE(made);
        CHECK(made.error().kind == error_kind::not_found);
        CHECK_THAT(made.error().message, Catch::Contains("no catalog at"));
        CHECK_FALSE(std::filesystem::exists(place / "backup"));
    }
}

TEST_CASE("restore: a damaged, incomplete or foreign backup is refused and nothing is restored", "[backup]") {
    data_folder data;
    const auto file = data.add("demo", "1.0");
    temp_dir place;
    const auto good = place / "good";
    REQUIRE(backup::create_backup(data.dir.path(), good, {.include_blobs = true, .copy = {}}));
    const auto blob_relative = std::filesystem::path("blobs") / "sha256" / file.sha256.substr(0, 2) /
                               file.sha256.substr(2, 2) / file.sha256;

    struct damage {
        std::string name;
        std::function<void(const std::filesystem::path&)> apply;
        std::string message;
    };
    const std::vector<damage> table = {
        {"no manifest (cut off before its end)",
         [](const std::filesystem::path& dir) { std::filesystem::remove(dir / "manifest.json"); },
         "not a finished wheelhouse backup"},
        {"a truncated catalog",
         [](const std::filesystem::path& dir) {
             make_writable(dir / "catalog.db");
             std::filesystem::resize_file(dir / "catalog.db", 4096);
         },
         "cut short"},
        {"a catalog with one byte changed",
         [](const std::filesystem::path& dir) {
             make_writable(dir / "catalog.db");
             auto bytes = read_file(dir / "catalog.db");
             bytes[bytes.size() / 2] ^= 0x5a;
             std::filesystem::remove(dir / "catalog.db");
             write_file(dir / "catalog.db", bytes);
         },
         "the backup is corrupt: "},
        {"a blob with one byte changed",
         [&](const std::filesystem::path& dir) {
             make_writable(dir / blob_relative);
             auto bytes = read_file(dir / blob_relative);
             bytes[10] ^= 0x01;
             std::filesystem::remove(dir / blob_relative);
             write_file(dir / blob_relative, bytes);
         },
         file.sha256},
        {"a missing blob",
         [&](const std::filesystem::path& dir) { std::filesystem::remove(dir / blob_relative); },
         "listed in its manifest but missing"},
        {"a manifest cut in half",
         [](const std::filesystem::path& dir) {
             auto text = read_file(dir / "manifest.json");
             std::filesystem::remove(dir / "manifest.json");
             write_file(dir / "manifest.json", text.substr(0, text.size() / 2));
         },
         "not valid JSON"},
        {"a manifest naming a path outside the store",
         [](const std::filesystem::path& dir) {
             auto text = read_file(dir / "manifest.json");
             const auto at = text.find("blobs/sha256/");
             text.replace(at, 13, "../../sha256/");
             std::filesystem::remove(dir / "manifest.json");
             write_file(dir / "manifest.json", text);
         },
         "is not a path of the blob store"},
    };
    for (const auto& row : table) {
        SECTION(row.name) {
            const auto broken = place / "broken";
            std::filesystem::copy(good, broken, std::filesystem::copy_options::recursive);
            row.apply(broken);
            auto restored = backup::restore_backup(broken, place / "data");
            REQUIRE_FALSE(restored);
            CHECK(restored.error().kind == error_kind::invalid);
            CHECK_THAT(restored.error().message, Catch::Contains(row.message));
            CHECK_FALSE(std::filesystem::exists(place / "data"));
            CHECK(partial_folders(place.path()) == 0);
        }
    }
    SECTION("a data folder that is not empty") {
        write_file(place / "data" / "catalog.db", "live");
        auto restored = backup::restore_backup(good, place / "data");
        REQUIRE_FALSE(restored);
        CHECK_THAT(restored.error().message, Catch::Contains("is not empty"));
        CHECK(read_file(place / "data" / "catalog.db") == "live");
    }
    SECTION("an empty data folder is fine") {
        std::filesystem::create_directories(place / "data");
        REQUIRE(backup::restore_backup(good, place / "data"));
        CHECK(row_texts(place / "data" / "catalog.db").size() == 1);
    }
}
