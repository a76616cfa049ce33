#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "test_support.hpp"
#include "wheelhouse/catalog/migrations.hpp"
#include "wheelhouse/sqlite/connection.hpp"

using namespace wheelhouse;
using wheelhouse::testing::temp_dir;

namespace {

sqlite::connection open_db(const std::filesystem::path& path) {
    auto db = sqlite::connection::open(path, {.read_only = false, .create = true});
    REQUIRE(db);
    return std::move(db).value();
}

bool has_table(sqlite::connection& db, std::string_view table) {
    auto query = db.prepare("SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name = ?1");
    REQUIRE(query);
    query->bind_text(1, table);
    REQUIRE(*query->step());
    return query->column_int64(0) == 1;
}

}  // namespace

TEST_CASE("migrations: the schema files are embedded in number order", "[migrations]") {
    auto all = catalog::built_in_migrations();
    REQUIRE(all.size() >= 2);
    for (std::size_t i = 0; i < all.size(); ++i) {
        CAPTURE(all[i].name);
        CHECK(all[i].number == static_cast<std::int64_t>(i + 1));
        CHECK_FALSE(all[i].sql.empty());
    }
    CHECK(all[0].name == "0001_init.sql");
    CHECK_THAT(std::string(all[0].sql), Catch::Contains("CREATE TABLE files"));
}

TEST_CASE("migrations: a fresh database gets every migration and the last version", "[migrations]") {
    temp_dir dir;
    auto db = open_db(dir / "catalog.db");
    auto version = catalog::migrate(db);
    REQUIRE(version);
    const auto latest = catalog::built_in_migrations().back().number;
    CHECK(*version == latest);
    CHECK(*db.query_int64("PRAGMA user_version") == latest);
    for (auto table : {"projects", "files", "tokens", "audit_log"}) {
        CAPTURE(table);
        CHECK(has_table(db, table));
    }
}

TEST_CASE("migrations: re-opening a migrated database changes nothing", "[migrations]") {
    temp_dir dir;
    {
        auto db = open_db(dir / "catalog.db");
        REQUIRE(catalog::migrate(db));
        REQUIRE(db.execute("INSERT INTO projects (name, display_name, created_ms) VALUES ('a', 'A', 1)"));
    }
    auto db = open_db(dir / "catalog.db");
    auto version = catalog::migrate(db);
    REQUIRE(version);
    CHECK(*version == catalog::built_in_migrations().back().number);
    CHECK(*db.query_int64("SELECT count(*) FROM projects") == 1);
}

TEST_CASE("migrations: only the migrations above user_version are applied, each once", "[migrations]") {
    temp_dir dir;
    auto db = open_db(dir / "catalog.db");
    const catalog::migration first_two[] = {
        {1, "0001_a.sql", "CREATE TABLE a (x INTEGER);"},
        {2, "0002_b.sql", "CREATE TABLE b (x INTEGER);"},
    };
    REQUIRE(*catalog::migrate(db, std::span(first_two, 1)) == 1);
    CHECK(has_table(db, "a"));
    CHECK_FALSE(has_table(db, "b"));
    // Re-running migration 1 would fail ("table a already exists"): it must be skipped.
    REQUIRE(*catalog::migrate(db, first_two) == 2);
    CHECK(has_table(db, "b"));
}

TEST_CASE("migrations: a failing migration leaves the database at the previous version", "[migrations]") {
    temp_dir dir;
    auto db = open_db(dir / "catalog.db");
    const catalog::migration broken[] = {
        {1, "0001_a.sql", "CREATE TABLE a (x INTEGER);"},
        {2, "0002_broken.sql", "CREATE TABLE b (x INTEGER); INSERT INTO missing VALUES (1);"},
    };
    auto version = catalog::migrate(db, broken);
    REQUIRE_FALSE(version);
    CHECK_THAT(version.error().message, Catch::Contains("0002_broken.sql") && Catch::Contains("no such table: missing"));
    CHECK(*db.query_int64("PRAGMA user_version") == 1);
    CHECK_FALSE(has_table(db, "b"));  // its first statement was rolled back with it
}

TEST_CASE("migrations: a database newer than the binary is refused", "[migrations]") {
    temp_dir dir;
    auto db = open_db(dir / "catalog.db");
    const auto latest = catalog::built_in_migrations().back().number;
    REQUIRE(db.execute("PRAGMA user_version = " + std::to_string(latest + 1)));
    auto version = catalog::migrate(db);
    REQUIRE_FALSE(version);
    CHECK_THAT(version.error().message,
               Catch::Contains("schema version " + std::to_string(latest + 1)) &&
                   Catch::Contains("newer than this wheelhouse understands"));
    CHECK_FALSE(has_table(db, "files"));
}

TEST_CASE("migrations: 0005 gives remote files a fetch URL, NULL for the rows already there", "[migrations]") {
    temp_dir dir;
    auto db = open_db(dir / "catalog.db");
    const auto all = catalog::built_in_migrations();
    REQUIRE(all.size() >= 5);
    CHECK(all[4].name == "0005_remote_fetch_url.sql");
    REQUIRE(*catalog::migrate(db, all.first(4)) == 4);
    REQUIRE(db.execute("INSERT INTO projects (name, display_name, created_ms) VALUES ('demo', 'demo', 1)"));
    REQUIRE(db.execute(
        "INSERT INTO files (project_id, filename, version, normalized_version, python_tag, abi_tag, platform_tag, "
        "sha256, size, upload_time_ms, download_mode, remote_url) VALUES (1, 'demo-1.0-py3-none-any.whl', '1.0', "
        "'1.0', 'py3', 'none', 'any', '" + std::string(64, 'a') + "', 10, 1, 'proxy', "
        "'https://github.com/o/r/releases/download/v1/demo-1.0-py3-none-any.whl')"));
    REQUIRE(*catalog::migrate(db) == all.back().number);
    CHECK(*db.query_int64("SELECT count(*) FROM files WHERE fetch_url IS NULL") == 1);
    REQUIRE(db.execute("UPDATE files SET fetch_url = 'https://api.github.com/repos/o/r/releases/assets/7'"));
}

TEST_CASE("migrations: 0008 turns each variant wheel's properties JSON into rows and drops the column", "[migrations]") {
    temp_dir dir;
    auto db = open_db(dir / "catalog.db");
    const auto all = catalog::built_in_migrations();
    REQUIRE(all.size() >= 8);
    CHECK(all[7].name == "0008_variant_properties.sql");
    REQUIRE(*catalog::migrate(db, all.first(7)) == 7);
    REQUIRE(db.execute("INSERT INTO projects (name, display_name, created_ms) VALUES ('flash-attn', 'flash_attn', 1)"));
    // A plain wheel, the null variant and a CUDA build, as 0007 stored them.
    const auto insert = [&](std::string_view filename, std::string_view label, std::string_view properties) {
        auto query = db.prepare(
            "INSERT INTO files (project_id, filename, version, normalized_version, python_tag, abi_tag, platform_tag, "
            "sha256, size, upload_time_ms, variant_label, variant_properties) VALUES (1, ?1, '2.8.3', '2.8.3', 'cp312', "
            "'cp312', 'linux_x86_64', ?2, 10, 1, ?3, ?4)");
        REQUIRE(query);
        query->bind_text(1, filename).bind_text(2, std::string(64, 'a'));
        if (label.empty()) query->bind_null(3);
        else query->bind_text(3, label);
        query->bind_text(4, properties);
        REQUIRE(query->run());
    };
    insert("flash_attn-2.8.3-cp312-cp312-linux_x86_64.whl", "", "");
    insert("flash_attn-2.8.3-cp312-cp312-linux_x86_64-null.whl", "null", "{}");
    insert("flash_attn-2.8.3-cp312-cp312-linux_x86_64-cu128.whl", "cu128",
           R"({"nvidia":{"cuda_version_lower_bound":["12.8"],"sm_arch":["100_real","90_real"]},"x86_64":{"level":["v3"]}})");

    REQUIRE(*catalog::migrate(db) == all.back().number);
    auto rows = db.prepare(
        "SELECT f.variant_label, v.namespace, v.feature, v.value FROM variant_properties v JOIN files f ON f.id = v.file_id "
        "ORDER BY f.id, v.namespace, v.feature, v.value");
    REQUIRE(rows);
    std::vector<std::string> read;
    while (*rows->step()) {
        read.push_back(rows->column_text(0) + " " + rows->column_text(1) + " :: " + rows->column_text(2) +
                       " :: " + rows->column_text(3));
    }
    CHECK(read == std::vector<std::string>{"cu128 nvidia :: cuda_version_lower_bound :: 12.8",
                                           "cu128 nvidia :: sm_arch :: 100_real", "cu128 nvidia :: sm_arch :: 90_real",
                                           "cu128 x86_64 :: level :: v3"});
    CHECK(*db.query_int64("SELECT count(*) FROM pragma_table_info('files') WHERE name = 'variant_properties'") == 0);
    // A file's rows go with it.
    REQUIRE(db.execute("DELETE FROM files WHERE variant_label = 'cu128'"));
    CHECK(*db.query_int64("SELECT count(*) FROM variant_properties") == 0);
}
