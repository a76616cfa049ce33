#include <catch2/catch.hpp>

#include <functional>

#include "data_folder.hpp"
#include "wheelhouse/crypto/hasher.hpp"
#include "wheelhouse/fsck/checker.hpp"

using namespace wheelhouse;
using namespace wheelhouse::testing;
using fsck::problem_kind;

namespace {

void overwrite(const std::filesystem::path& path, std::string_view bytes) {
    std::filesystem::remove(path);
    write_file(path, bytes);
}

std::vector<problem_kind> kinds(const fsck::fsck_report& report) {
    std::vector<problem_kind> found;
    for (const auto& entry : report.problems) found.push_back(entry.kind);
    std::sort(found.begin(), found.end());
    return found;
}

fsck::fsck_report run(data_folder& data, bool fix, bool delete_missing_rows = false) {
    fsck::fsck_options options;
    options.fix = fix;
    options.delete_missing_rows = delete_missing_rows;
    auto report = fsck::check(*data.db, *data.store, options);
    REQUIRE(report);
    return std::move(report).value();
}

}  // namespace

TEST_CASE("fsck: a sound data folder has no problem", "[fsck]") {
    data_folder data;
    data.add("demo", "1.0");
    data.add("demo", "1.1");
    const auto report = run(data, false);
    CHECK(report.problems.empty());
    CHECK(report.rows == 2);
    CHECK(report.blobs == 2);
    CHECK(report.metadata_files == 2);
    CHECK(report.bytes_hashed > 0);
}

TEST_CASE("fsck: each kind of damage is found, and --fix repairs what it can", "[fsck]") {
    struct damage_case {
        std::string name;
        // Damages `data`, whose rows are `victim` and `other`.
        std::function<void(data_folder&, const catalog::file_record& victim)> apply;
        problem_kind found;
        bool fixed_by_fix;                    // repaired by --fix alone
        std::vector<problem_kind> after_fix;  // what the rest of the --fix run, and a check after it, find
    };
    const std::vector<damage_case> table = {
        {"a blob whose row is gone",
         [](data_folder& data, const catalog::file_record& victim) {
             data.execute("DELETE FROM files WHERE filename = '" + victim.filename + "'");
         },
         problem_kind::orphan_blob, true, {}},
        {"a METADATA file alone, without blob or row",
         [](data_folder& data, const catalog::file_record&) {
             const std::string sha256(64, 'e');
             auto put = data.store->put_metadata(sha256, "Metadata-Version: 2.1\n");
             REQUIRE(put);
         },
         problem_kind::orphan_metadata, true, {}},
        {"a blob with a changed byte",
         [](data_folder& data, const catalog::file_record& victim) {
             auto bytes = read_file(data.store->blob_path(victim.sha256));
             bytes[bytes.size() - 3] ^= 0x10;
             overwrite(data.store->blob_path(victim.sha256), bytes);
         },
         problem_kind::corrupt_blob, true, {problem_kind::missing_blob}},
        {"a truncated blob",
         [](data_folder& data, const catalog::file_record& victim) {
             const auto bytes = read_file(data.store->blob_path(victim.sha256));
             overwrite(data.store->blob_path(victim.sha256), bytes.substr(0, bytes.size() / 2));
         },
         problem_kind::corrupt_blob, true, {problem_kind::missing_blob}},
        {"a missing blob",
         [](data_folder& data, const catalog::file_record& victim) {
             std::filesystem::remove(data.store->blob_path(victim.sha256));
         },
         problem_kind::missing_blob, false, {}},
        {"a METADATA file with other bytes",
         [](data_folder& data, const catalog::file_record& victim) {
             overwrite(data.store->metadata_path(victim.sha256), "Metadata-Version: 2.1\nName: other\n");
         },
         problem_kind::corrupt_metadata, true, {}},
        {"a missing METADATA file",
         [](data_folder& data, const catalog::file_record& victim) {
             std::filesystem::remove(data.store->metadata_path(victim.sha256));
         },
         problem_kind::missing_metadata, true, {}},
        {"a stray file in the store",
         [](data_folder& data, const catalog::file_record&) {
             write_file(data.dir / "blobs" / "sha256" / "ab" / "notes.txt", "left here");
         },
         problem_kind::stray_file, true, {}},
    };
    for (const auto& row : table) {
        SECTION(row.name) {
            data_folder data;
            const auto victim = data.add("demo", "1.0");
            const auto other = data.add("demo", "1.1");
            const auto other_metadata = read_file(data.store->metadata_path(other.sha256));
            row.apply(data, victim);

            const auto found = run(data, false);
            CHECK(kinds(found) == std::vector<problem_kind>{row.found});
            REQUIRE(found.problems.size() == 1);
            CHECK_FALSE(found.problems[0].fixed);
            CHECK_FALSE(found.problems[0].action.empty());
            CHECK(found.unfixed() == 1);

            const auto fixed = run(data, true);
            REQUIRE_FALSE(fixed.problems.empty());
            CHECK(fixed.problems[0].kind == row.found);
            CHECK(fixed.problems[0].fixed == row.fixed_by_fix);
            // A corrupt blob leaves the store, so its row lacks it from then on, in this run too.
            std::vector<problem_kind> rest;
            for (std::size_t i = 1; i < fixed.problems.size(); ++i) {
                rest.push_back(fixed.problems[i].kind);
                CHECK_FALSE(fixed.problems[i].fixed);
            }
            CHECK(rest == row.after_fix);
            CHECK(fixed.unfixed() == row.after_fix.size() + (row.fixed_by_fix ? 0 : 1));
            CHECK(kinds(run(data, false)) == (row.fixed_by_fix ? row.after_fix : std::vector<problem_kind>{row.found}));

            // The sound row was never touched.
            CHECK(crypto::sha256_hex(read_file(data.store->blob_path(other.sha256))) == other.sha256);
            CHECK(read_file(data.store->metadata_path(other.sha256)) == other_metadata);
            CHECK(data.rows() >= 1);
        }
    }
}

TEST_CASE("fsck: a corrupt blob goes to quarantine, never away", "[fsck]") {
    data_folder data;
    const auto victim = data.add("demo", "1.0");
    overwrite(data.store->blob_path(victim.sha256), "not the wheel");
    run(data, true);
    CHECK(count_files(data.dir / "quarantine") == 1);
    CHECK(data.rows() == 1);  // the row stays: its bytes may come back from a backup
}

TEST_CASE("fsck: rows whose blob is missing are deleted only with --delete-missing-rows", "[fsck]") {
    data_folder data;
    const auto victim = data.add("demo", "1.0");
    data.add("demo", "1.1");
    std::filesystem::remove(data.store->blob_path(victim.sha256));
    run(data, true);
    CHECK(data.rows() == 2);
    const auto report = run(data, true, true);
    REQUIRE(report.problems.size() == 1);
    CHECK(report.problems[0].fixed);
    CHECK(data.rows() == 1);
    CHECK_FALSE(data.store->has_metadata(victim.sha256));  // its METADATA went with the row
    CHECK(run(data, false).problems.empty());
}

TEST_CASE("fsck: remote rows need no blob, a cached blob is checked when present", "[fsck]") {
    data_folder data;
    const auto remote = data.add("demo", "1.0");
    const auto cached = data.add("demo", "1.1");
    data.execute("UPDATE files SET download_mode = 'redirect', remote_url = 'https://example.org/a.whl' "
                 "WHERE filename = '" + remote.filename + "'");
    data.execute("UPDATE files SET download_mode = 'cache', remote_url = 'https://example.org/b.whl' "
                 "WHERE filename = '" + cached.filename + "'");
    std::filesystem::remove(data.store->blob_path(remote.sha256));
    std::filesystem::remove(data.store->blob_path(cached.sha256));
    CHECK(run(data, false).problems.empty());
}
