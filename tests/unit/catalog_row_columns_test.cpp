#include <catch2/catch.hpp>

#include <algorithm>
#include <array>
#include <limits>
#include <set>
#include <string>
#include <vector>

#include "test_support.hpp"
#include "wheelhouse/catalog/catalog.hpp"
#include "wheelhouse/catalog/row_columns.hpp"
#include "wheelhouse/crypto/hasher.hpp"
#include "wheelhouse/sqlite/columns.hpp"
#include "wheelhouse/sqlite/connection.hpp"

using namespace wheelhouse;
using wheelhouse::testing::temp_dir;

namespace {

// The table's columns as SQLite has them after every migration.
std::vector<std::string> table_columns(sqlite::connection& db, const std::string& table) {
    auto query = db.prepare("SELECT name FROM pragma_table_info(?1) ORDER BY cid");
    REQUIRE(query);
    query->bind_text(1, table);
    std::vector<std::string> names;
    for (;;) {
        auto row = query->step();
        REQUIRE(row);
        if (!*row) break;
        names.push_back(query->column_text(0));
    }
    REQUIRE_FALSE(names.empty());
    return names;
}

// The list's names plus those read or written apart from it, each once.
template <class Columns>
std::vector<std::string> listed(const Columns& columns, std::initializer_list<const char*> apart) {
    std::vector<std::string> names(apart.begin(), apart.end());
    for (const auto& one : columns) names.emplace_back(one.name);
    return names;
}

void check_same_names(std::vector<std::string> table, std::vector<std::string> list) {
    std::sort(list.begin(), list.end());
    CHECK(std::adjacent_find(list.begin(), list.end()) == list.end());  // none named twice
    std::sort(table.begin(), table.end());
    CHECK(table == list);
}

struct sample {
    std::string text;
    std::optional<std::string> maybe_text;
    std::int64_t number = 0;
    std::uint64_t size = 0;
    bool flag = false;
    std::optional<bool> maybe_flag;
};

constexpr std::array sample_columns = {
    sqlite::field<&sample::text>("text"),         sqlite::field<&sample::maybe_text>("maybe_text"),
    sqlite::field<&sample::number>("number"),     sqlite::field<&sample::size>("size"),
    sqlite::field<&sample::flag>("flag"),         sqlite::field<&sample::maybe_flag>("maybe_flag"),
};

}  // namespace

TEST_CASE("catalog rows: every column of files, projects, release_variants and variant_properties is in its list, once",
          "[catalog]") {
    temp_dir dir;
    REQUIRE(catalog::catalog::open(dir / "catalog.db"));
    auto db = sqlite::connection::open(dir / "catalog.db", {.read_only = true});
    REQUIRE(db);
    // A migration that adds a column without its line in row_columns.hpp fails here.
    check_same_names(table_columns(*db, "files"), listed(catalog::file_columns, {"id", "project_id"}));
    check_same_names(table_columns(*db, "projects"), listed(catalog::project_columns, {"id", "created_ms"}));
    check_same_names(table_columns(*db, "release_variants"), listed(catalog::release_columns, {"project_id"}));
    check_same_names(table_columns(*db, "variant_properties"), listed(catalog::property_columns, {"file_id"}));
}

TEST_CASE("sqlite columns: the lists an INSERT, an upsert and a SELECT are made of", "[sqlite]") {
    CHECK(sqlite::column_list(sample_columns) == "text, maybe_text, number, size, flag, maybe_flag");
    CHECK(sqlite::column_list(sample_columns, "s.") == "s.text, s.maybe_text, s.number, s.size, s.flag, s.maybe_flag");
    CHECK(sqlite::parameter_list(sample_columns, 2) == "?2, ?3, ?4, ?5, ?6, ?7");
    constexpr auto two = sqlite::pick(sample_columns, {"size", "text"});
    CHECK(sqlite::column_list(two) == "size, text");
    CHECK(sqlite::assignment_list(two) == "size = excluded.size, text = excluded.text");
}

TEST_CASE("sqlite columns: a row round-trips through its list, absent and false kept apart", "[sqlite]") {
    temp_dir dir;
    auto db = sqlite::connection::open(dir / "a.db", {.read_only = false, .create = true});
    REQUIRE(db);
    REQUIRE(db->execute("CREATE TABLE samples (id INTEGER PRIMARY KEY, text TEXT NOT NULL, maybe_text TEXT, "
                        "number INTEGER NOT NULL, size INTEGER NOT NULL, flag INTEGER NOT NULL, maybe_flag INTEGER)"));
    const std::vector<sample> written = {
        {"a", "b", -7, std::numeric_limits<std::uint64_t>::max(), true, false},
        {"", std::nullopt, 0, 0, false, std::nullopt},
        {"c", "", 1, 2, false, true},
    };
    auto insert = db->prepare("INSERT INTO samples (id, " + sqlite::column_list(sample_columns) + ") VALUES (?1, " +
                              sqlite::parameter_list(sample_columns, 2) + ")");
    REQUIRE(insert);
    for (std::size_t i = 0; i < written.size(); ++i) {
        insert->bind_int64(1, static_cast<std::int64_t>(i));
        sqlite::bind_columns(*insert, 2, sample_columns, written[i]);
        REQUIRE(insert->run());
        insert->reset();
    }
    auto select = db->prepare("SELECT id, " + sqlite::column_list(sample_columns) + " FROM samples ORDER BY id");
    REQUIRE(select);
    for (const auto& expected : written) {
        auto row = select->step();
        REQUIRE(row);
        REQUIRE(*row);
        sample read;
        sqlite::read_columns(*select, 1, sample_columns, read);
        CHECK(read.text == expected.text);
        CHECK(read.maybe_text == expected.maybe_text);
        CHECK(read.number == expected.number);
        CHECK(read.size == expected.size);
        CHECK(read.flag == expected.flag);
        CHECK(read.maybe_flag == expected.maybe_flag);
    }
    auto end = select->step();
    REQUIRE(end);
    CHECK_FALSE(*end);
}

TEST_CASE("catalog rows: an sdist served from a cache round-trips with its type and mode", "[catalog]") {
    temp_dir dir;
    auto opened = catalog::catalog::open(dir / "catalog.db");
    REQUIRE(opened);
    catalog::new_file file;
    file.project_display_name = "Demo";
    file.file.project = "demo";
    file.file.filename = "demo-1.0.tar.gz";
    file.file.version = "1.0";
    file.file.normalized_version = "1.0";
    file.file.sha256 = crypto::sha256_hex("sdist");
    file.file.size = 10;
    file.file.mode = catalog::download_mode::cache;
    file.file.remote_url = "https://example.com/demo-1.0.tar.gz";
    file.file.type = catalog::package_type::sdist;
    REQUIRE((*opened)->add_file(file));
    auto found = (*opened)->find_file("demo-1.0.tar.gz");
    REQUIRE(found);
    REQUIRE(found->has_value());
    CHECK((*found)->type == catalog::package_type::sdist);
    CHECK((*found)->mode == catalog::download_mode::cache);
    CHECK((*found)->remote_url == file.file.remote_url);
    CHECK_FALSE((*found)->variant_label.has_value());
    auto project = (*opened)->find_project("demo");
    REQUIRE(project);
    REQUIRE(project->has_value());
    CHECK((*project)->display_name == "Demo");
    CHECK((*project)->status == catalog::project_status::active);
    CHECK_FALSE((*project)->status_reason.has_value());
}
