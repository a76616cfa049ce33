// Reserved names and kept upstream files in the catalog (schema/0010_upstream.sql): a kept
// upstream file's blob is a row's blob for fsck, backup and blob release like an upload's.

#include <catch2/catch.hpp>

#include "data_folder.hpp"
#include "wheelhouse/backup/backup_folder.hpp"
#include "wheelhouse/catalog/upstream_rows.hpp"
#include "wheelhouse/crypto/hasher.hpp"
#include "wheelhouse/fsck/checker.hpp"

using namespace wheelhouse;
using namespace wheelhouse::testing;

namespace {

// An upstream file's bytes and METADATA, kept as the server keeps them: blob first, then the row.
catalog::kept_upstream_file keep(data_folder& data, std::string_view bytes, std::string_view filename,
                                 std::string_view metadata = {}) {
    catalog::kept_upstream_file file;
    file.sha256 = crypto::sha256_hex(bytes);
    file.filename = std::string(filename);
    file.project = "six";
    file.upstream = "pypi";
    file.url = "https://files.example/" + file.filename;
    auto spool = data.store->create_spool();
    REQUIRE(spool);
    write_file(spool->path(), bytes);
    REQUIRE(data.store->put_blob(file.sha256, spool->path()));
    file.size = bytes.size();
    if (!metadata.empty()) {
        REQUIRE(data.store->put_metadata(file.sha256, metadata));
        file.metadata_sha256 = crypto::sha256_hex(metadata);
    }
    REQUIRE(catalog::record_kept_file(*data.db, file));
    return file;
}

}  // namespace

TEST_CASE("upstream rows: names are reserved once, listed, released, and each change audited", "[catalog][upstream]") {
    data_folder data;
    CHECK(catalog::reserve_name(*data.db, "acme-*", std::string("ours"), "cli").value());
    CHECK_FALSE(catalog::reserve_name(*data.db, "acme-*", std::nullopt, "cli").value());
    CHECK(catalog::reserve_name(*data.db, "acme", std::nullopt, "cli").value());
    const auto listed = catalog::list_reservations(*data.db);
    REQUIRE(listed);
    REQUIRE(listed->size() == 2);
    CHECK(listed->at(0).pattern == "acme");
    CHECK(listed->at(1).pattern == "acme-*");
    CHECK(listed->at(1).reason == "ours");
    CHECK(listed->at(1).created_by == "cli");
    CHECK(catalog::release_name(*data.db, "acme", "cli").value());
    CHECK_FALSE(catalog::release_name(*data.db, "acme", "cli").value());
    CHECK(catalog::list_reservations(*data.db)->size() == 1);
    auto db = sqlite::connection::open(data.dir / "catalog.db", {});
    REQUIRE(db);
    CHECK(db->query_int64("SELECT count(*) FROM audit_log WHERE action IN ('reserve_name', 'release_name')").value() == 3);
}

TEST_CASE("upstream rows: a file and its metadata are recorded apart, and counted", "[catalog][upstream]") {
    data_folder data;
    catalog::kept_upstream_file metadata_only;
    metadata_only.sha256 = std::string(64, 'a');
    metadata_only.filename = "six-1.17.0-py2.py3-none-any.whl";
    metadata_only.project = "six";
    metadata_only.upstream = "pypi";
    metadata_only.url = "https://files.example/six-1.17.0-py2.py3-none-any.whl";
    metadata_only.metadata_sha256 = std::string(64, 'b');
    REQUIRE(catalog::record_kept_file(*data.db, metadata_only));
    auto found = catalog::find_kept_file(*data.db, metadata_only.sha256, metadata_only.filename);
    REQUIRE(found);
    REQUIRE(*found);
    CHECK((*found)->size == 0);
    CHECK((*found)->metadata_sha256 == std::string(64, 'b'));

    auto whole = metadata_only;
    whole.metadata_sha256.clear();
    whole.size = 11050;
    REQUIRE(catalog::record_kept_file(*data.db, whole));
    found = catalog::find_kept_file(*data.db, metadata_only.sha256, metadata_only.filename);
    CHECK((*found)->size == 11050);
    CHECK((*found)->metadata_sha256 == std::string(64, 'b'));  // kept from before
    CHECK_FALSE(*catalog::find_kept_file(*data.db, metadata_only.sha256, "six-1.16.0.tar.gz"));

    const auto totals = catalog::count_kept_files(*data.db);
    REQUIRE(totals);
    CHECK(totals->files == 1);
    CHECK(totals->bytes == 11050);
    CHECK(totals->metadata_files == 1);
}

TEST_CASE("upstream rows: fsck and backup take kept upstream files as rows' blobs", "[catalog][upstream][fsck]") {
    data_folder data;
    data.add("demo", "1.0");
    const auto kept = keep(data, "the bytes of six", "six-1.17.0-py2.py3-none-any.whl", "Name: six\n");
    CHECK(data.db->references_blob(kept.sha256).value());

    auto report = fsck::check(*data.db, *data.store, {});
    REQUIRE(report);
    CHECK(report->problems.empty());  // neither blob nor .metadata is an orphan
    CHECK(report->blobs == 2);

    temp_dir out;
    auto backup = backup::create_backup(data.dir.path(), out / "backup", {.include_blobs = true, .copy = {}});
    if (!backup) FAIL(backup.error().message);
    CHECK(backup->blobs == 2);
    CHECK(backup->metadata_files == 2);
    CHECK(std::filesystem::exists(out / "backup" / std::filesystem::relative(data.store->blob_path(kept.sha256), data.dir.path())));
}

TEST_CASE("upstream rows: dropping kept files releases their blobs unless another row uses them", "[catalog][upstream]") {
    data_folder data;
    const auto old_file = keep(data, "old bytes", "six-1.0.tar.gz", "Name: six\n");
    const auto local = data.add("six-local", "1.0");
    // The same bytes kept from upstream as a local upload holds: the blob stays for the upload.
    auto shared = keep(data, "x", "six-2.0.tar.gz");
    shared.sha256 = local.sha256;
    shared.filename = "six-3.0.tar.gz";
    shared.size = local.size;
    REQUIRE(catalog::record_kept_file(*data.db, shared));

    const auto remove = [&](std::string_view sha256) { return data.store->remove(sha256); };
    const auto none = catalog::drop_kept_files(*data.db, 0, std::nullopt, remove);
    REQUIRE(none);
    CHECK(none->empty());
    const auto other_project = catalog::drop_kept_files(*data.db, INT64_MAX, std::string("numpy"), remove);
    CHECK(other_project->empty());

    const auto dropped = catalog::drop_kept_files(*data.db, INT64_MAX, std::string("six"), remove);
    REQUIRE(dropped);
    CHECK(dropped->size() == 3);
    CHECK_FALSE(data.store->has_blob(old_file.sha256));
    CHECK_FALSE(data.store->has_metadata(old_file.sha256));
    CHECK(data.store->has_blob(local.sha256));
    CHECK(catalog::count_kept_files(*data.db)->files == 0);
    auto report = fsck::check(*data.db, *data.store, {});
    REQUIRE(report);
    CHECK(report->problems.empty());
}
