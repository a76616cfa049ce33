#include <catch2/catch.hpp>

#include <thread>

#include "test_support.hpp"
#include "wheelhouse/sqlite/connection.hpp"
#include "wheelhouse/sqlite/transaction.hpp"

using namespace wheelhouse;
using wheelhouse::testing::temp_dir;

namespace {

sqlite::connection open_writer(const std::filesystem::path& path,
                               std::chrono::milliseconds busy_timeout = std::chrono::milliseconds(5000)) {
    auto db = sqlite::connection::open(path, {.read_only = false, .create = true, .busy_timeout = busy_timeout});
    REQUIRE(db);
    return std::move(db).value();
}

std::int64_t count_rows(sqlite::connection& db) {
    auto count = db.query_int64("SELECT count(*) FROM t");
    REQUIRE(count);
    return *count;
}

}  // namespace

TEST_CASE("sqlite: a writable connection is in WAL mode with foreign keys on, and syncs every commit", "[sqlite]") {
    temp_dir dir;
    auto db = open_writer(dir / "a.db");
    auto journal = db.prepare("PRAGMA journal_mode");
    REQUIRE(journal);
    REQUIRE(*journal->step());
    CHECK(journal->column_text(0) == "wal");
    CHECK(*db.query_int64("PRAGMA foreign_keys") == 1);
    CHECK(*db.query_int64("PRAGMA synchronous") == 2);  // FULL: NORMAL does not sync a WAL commit
}

TEST_CASE("sqlite: opening a missing file without create fails with SQLite's reason", "[sqlite]") {
    temp_dir dir;
    auto db = sqlite::connection::open(dir / "missing.db", {});
    REQUIRE_FALSE(db);
    CHECK(db.error().kind == error_kind::internal);
    CHECK_THAT(db.error().message, Catch::Contains("missing.db") && Catch::Contains("unable to open"));
}

TEST_CASE("sqlite: statements bind, step and read typed columns", "[sqlite]") {
    temp_dir dir;
    auto db = open_writer(dir / "a.db");
    REQUIRE(db.execute("CREATE TABLE t (i INTEGER, s TEXT, o TEXT)"));
    auto insert = db.prepare("INSERT INTO t (i, s, o) VALUES (?1, ?2, ?3)");
    REQUIRE(insert);
    const std::string with_nul("a\0b", 3);
    insert->bind_int64(1, -42).bind_text(2, with_nul).bind_optional_text(3, std::nullopt);
    REQUIRE(insert->run());
    insert->reset();
    insert->bind_int64(1, 7).bind_text(2, "it's \"quoted\"; DROP TABLE t;").bind_optional_text(3, std::string("x"));
    REQUIRE(insert->run());

    auto select = db.prepare("SELECT i, s, o FROM t ORDER BY i");
    REQUIRE(select);
    REQUIRE(*select->step());
    CHECK(select->column_int64(0) == -42);
    CHECK(select->column_text(1) == with_nul);
    CHECK_FALSE(select->column_optional_text(2).has_value());
    REQUIRE(*select->step());
    CHECK(select->column_text(1) == "it's \"quoted\"; DROP TABLE t;");
    CHECK(select->column_optional_text(2) == std::optional<std::string>("x"));
    CHECK_FALSE(*select->step());
}

TEST_CASE("sqlite: a bind to a parameter that does not exist is reported by step", "[sqlite]") {
    temp_dir dir;
    auto db = open_writer(dir / "a.db");
    auto select = db.prepare("SELECT ?1");
    REQUIRE(select);
    select->bind_int64(5, 1);
    auto row = select->step();
    REQUIRE_FALSE(row);
    CHECK_THAT(row.error().message, Catch::Contains("binding parameter 5"));
}

TEST_CASE("sqlite: a malformed statement is refused with SQLite's message", "[sqlite]") {
    temp_dir dir;
    auto db = open_writer(dir / "a.db");
    auto bad = db.prepare("SELEC 1");
    REQUIRE_FALSE(bad);
    CHECK_THAT(bad.error().message, Catch::Contains("syntax error"));
}

TEST_CASE("sqlite: a transaction rolls back when destroyed uncommitted", "[sqlite]") {
    temp_dir dir;
    auto db = open_writer(dir / "a.db");
    REQUIRE(db.execute("CREATE TABLE t (i INTEGER)"));
    {
        auto transaction = sqlite::transaction::begin(db, sqlite::transaction_mode::immediate);
        REQUIRE(transaction);
        REQUIRE(db.execute("INSERT INTO t VALUES (1)"));
        CHECK(count_rows(db) == 1);
    }
    CHECK(count_rows(db) == 0);
    {
        auto transaction = sqlite::transaction::begin(db, sqlite::transaction_mode::immediate);
        REQUIRE(transaction);
        REQUIRE(db.execute("INSERT INTO t VALUES (2)"));
        REQUIRE(transaction->commit());
        CHECK_FALSE(transaction->active());
    }
    CHECK(count_rows(db) == 1);
}

TEST_CASE("sqlite: a savepoint undoes only its own changes, and the transaction goes on", "[sqlite]") {
    temp_dir dir;
    auto db = open_writer(dir / "a.db");
    REQUIRE(db.execute("CREATE TABLE t (i INTEGER)"));
    auto transaction = sqlite::transaction::begin(db, sqlite::transaction_mode::immediate);
    REQUIRE(transaction);
    {
        auto kept = sqlite::savepoint::begin(db);
        REQUIRE(kept);
        REQUIRE(db.execute("INSERT INTO t VALUES (1)"));
        REQUIRE(kept->release());
    }
    {
        auto undone = sqlite::savepoint::begin(db);
        REQUIRE(undone);
        REQUIRE(db.execute("INSERT INTO t VALUES (2); INSERT INTO t VALUES (3)"));
        CHECK(count_rows(db) == 3);
    }  // not released
    CHECK(count_rows(db) == 1);
    CHECK(db.in_transaction());
    REQUIRE(transaction->commit());
    CHECK_FALSE(db.in_transaction());
    CHECK(count_rows(db) == 1);
}

TEST_CASE("sqlite: a full disk is 'try again later', saying what to free", "[sqlite]") {
    temp_dir dir;
    auto db = open_writer(dir / "a.db");
    REQUIRE(db.execute("CREATE TABLE t (b BLOB)"));
    const auto pages = db.query_int64("PRAGMA page_count");
    REQUIRE(pages);
    // The database may not grow past its size now: what SQLite reports when the disk is full.
    REQUIRE(db.execute("PRAGMA max_page_count = " + std::to_string(*pages)));
    auto insert = db.prepare("INSERT INTO t VALUES (zeroblob(100000))");
    REQUIRE(insert);
    auto full = insert->run();
    REQUIRE_FALSE(full);
    CHECK(full.error().kind == error_kind::unavailable);
    CHECK_THAT(full.error().message, Catch::Contains("disk holding the catalog is full") &&
                                         Catch::Contains("nothing was stored") && Catch::Contains("Free space"));
}

TEST_CASE("sqlite: BEGIN IMMEDIATE takes the write lock at once", "[sqlite]") {
    temp_dir dir;
    auto first = open_writer(dir / "a.db");
    REQUIRE(first.execute("CREATE TABLE t (i INTEGER)"));
    auto second = open_writer(dir / "a.db", std::chrono::milliseconds(50));

    auto holding = sqlite::transaction::begin(first, sqlite::transaction_mode::immediate);
    REQUIRE(holding);
    // Nothing written yet, but a second writer must already wait (and here time out) ...
    auto blocked = sqlite::transaction::begin(second, sqlite::transaction_mode::immediate);
    REQUIRE_FALSE(blocked);
    CHECK(blocked.error().kind == error_kind::unavailable);
    // ... while a deferred reader still reads.
    auto reader = sqlite::transaction::begin(second, sqlite::transaction_mode::deferred);
    REQUIRE(reader);
    CHECK(count_rows(second) == 0);
    reader->rollback();
    holding->rollback();

    auto now_free = sqlite::transaction::begin(second, sqlite::transaction_mode::immediate);
    CHECK(now_free);
}

TEST_CASE("sqlite: a writer waits for the lock up to its busy timeout", "[sqlite]") {
    temp_dir dir;
    auto first = open_writer(dir / "a.db");
    REQUIRE(first.execute("CREATE TABLE t (i INTEGER)"));
    auto holding = sqlite::transaction::begin(first, sqlite::transaction_mode::immediate);
    REQUIRE(holding);
    bool released = false;  // Catch's assertions are for the main thread only
    std::thread releaser([&] {
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        released = first.execute("INSERT INTO t VALUES (1)") && holding->commit();
    });
    auto second = open_writer(dir / "a.db", std::chrono::milliseconds(5000));
    auto waited = sqlite::transaction::begin(second, sqlite::transaction_mode::immediate);
    releaser.join();
    REQUIRE(released);
    REQUIRE(waited);
    CHECK(count_rows(second) == 1);
}

TEST_CASE("sqlite: a read-only connection refuses writes", "[sqlite]") {
    temp_dir dir;
    auto writer = open_writer(dir / "a.db");
    REQUIRE(writer.execute("CREATE TABLE t (i INTEGER)"));
    auto reader = sqlite::connection::open(dir / "a.db", {.read_only = true});
    REQUIRE(reader);
    auto refused = reader->execute("INSERT INTO t VALUES (1)");
    REQUIRE_FALSE(refused);
    CHECK(count_rows(writer) == 0);
}

TEST_CASE("sqlite: a cached statement is prepared once and reset by its lease", "[sqlite]") {
    temp_dir dir;
    auto db = open_writer(dir / "a.db");
    REQUIRE(db.execute("CREATE TABLE t (i INTEGER); INSERT INTO t VALUES (1), (2);"));
    sqlite::statement* first_address = nullptr;
    {
        auto lease = db.cached("SELECT i FROM t ORDER BY i");
        REQUIRE(lease);
        first_address = &**lease;
        REQUIRE(*(*lease)->step());
        CHECK((*lease)->column_int64(0) == 1);
    }
    auto again = db.cached("SELECT i FROM t ORDER BY i");
    REQUIRE(again);
    CHECK(&**again == first_address);
    REQUIRE(*(*again)->step());
    CHECK((*again)->column_int64(0) == 1);  // started over: the lease reset it
}
