#include <catch2/catch.hpp>

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <thread>
#include <vector>

#include "test_support.hpp"

using namespace std::string_literals;
#include "wheelhouse/crypto/hasher.hpp"
#include "wheelhouse/storage/blob_store.hpp"

using namespace wheelhouse;
using wheelhouse::testing::count_files;
using wheelhouse::testing::read_file;
using wheelhouse::testing::temp_dir;
using wheelhouse::testing::write_file;

namespace {

storage::blob_store open_store(const temp_dir& dir) {
    auto store = storage::blob_store::open(dir.path());
    REQUIRE(store);
    return std::move(store).value();
}

storage::spool_file spool_with(const storage::blob_store& store, std::string_view bytes) {
    auto spool = store.create_spool();
    REQUIRE(spool);
    write_file(spool->path(), bytes);
    return std::move(spool).value();
}

pid_t dead_pid() {
    const pid_t child = ::fork();
    if (child == 0) ::_exit(0);
    int status = 0;
    ::waitpid(child, &status, 0);
    return child;
}

}  // namespace

TEST_CASE("blob_store: open creates the layout and paths fan out by the digest's first bytes", "[blob_store]") {
    temp_dir dir;
    auto store = open_store(dir);
    CHECK(std::filesystem::is_directory(dir / "blobs/sha256"));
    CHECK(std::filesystem::is_directory(dir / "tmp"));
    const std::string sha256 = crypto::sha256_hex("x");
    CHECK(store.blob_path(sha256) == dir.path() / "blobs/sha256" / sha256.substr(0, 2) / sha256.substr(2, 2) / sha256);
    CHECK(store.metadata_path(sha256).string() == store.blob_path(sha256).string() + ".metadata");
}

TEST_CASE("blob_store: a put blob holds the spool's bytes, read-only, and the spool stays", "[blob_store]") {
    temp_dir dir;
    auto store = open_store(dir);
    const std::string bytes = "wheel bytes\0with a nul"s;
    const std::string sha256 = crypto::sha256_hex(bytes);
    auto spool = spool_with(store, bytes);

    CHECK_FALSE(store.has_blob(sha256));
    auto put = store.put_blob(sha256, spool.path());
    REQUIRE(put);
    CHECK(*put == storage::put_outcome::created);
    CHECK(store.has_blob(sha256));
    CHECK(read_file(store.blob_path(sha256)) == bytes);
    CHECK(std::filesystem::exists(spool.path()));
    struct stat info {};
    REQUIRE(::stat(store.blob_path(sha256).c_str(), &info) == 0);
    CHECK((info.st_mode & 0222) == 0);

    spool.remove();
    CHECK(read_file(store.blob_path(sha256)) == bytes);  // the blob is its own name for the bytes
}

TEST_CASE("blob_store: an existing blob is never replaced", "[blob_store]") {
    temp_dir dir;
    auto store = open_store(dir);
    const std::string sha256 = crypto::sha256_hex("original");
    auto first = spool_with(store, "original");
    REQUIRE(*store.put_blob(sha256, first.path()) == storage::put_outcome::created);
    // A second put under the same digest (a caller bug, or a lying digest) changes nothing.
    auto second = spool_with(store, "something else");
    auto put = store.put_blob(sha256, second.path());
    REQUIRE(put);
    CHECK(*put == storage::put_outcome::already_present);
    CHECK(read_file(store.blob_path(sha256)) == "original");
}

TEST_CASE("blob_store: METADATA is stored beside the blob byte for byte", "[blob_store]") {
    temp_dir dir;
    auto store = open_store(dir);
    const std::string sha256 = crypto::sha256_hex("wheel");
    const std::string metadata = "Metadata-Version: 2.1\r\nName: flash-attn\r\nVersion: 2.8.3\r\n\r\nbody\xff";
    auto put = store.put_metadata(sha256, metadata);
    REQUIRE(put);
    CHECK(*put == storage::put_outcome::created);
    CHECK(store.has_metadata(sha256));
    CHECK(read_file(store.metadata_path(sha256)) == metadata);
    CHECK(*store.put_metadata(sha256, "other") == storage::put_outcome::already_present);
    CHECK(read_file(store.metadata_path(sha256)) == metadata);
    CHECK(count_files(dir / "tmp") == 0);  // its temporary file is gone
}

TEST_CASE("blob_store: remove deletes blob and metadata, and absent files are fine", "[blob_store]") {
    temp_dir dir;
    auto store = open_store(dir);
    const std::string sha256 = crypto::sha256_hex("bytes");
    auto spool = spool_with(store, "bytes");
    REQUIRE(store.put_blob(sha256, spool.path()));
    REQUIRE(store.put_metadata(sha256, "Name: x"));
    REQUIRE(store.remove(sha256));
    CHECK_FALSE(store.has_blob(sha256));
    CHECK_FALSE(store.has_metadata(sha256));
    CHECK(store.remove(sha256));
    CHECK(store.remove(crypto::sha256_hex("never stored")));
}

TEST_CASE("blob_store: spool files are unique and removed with their owner unless released", "[blob_store]") {
    temp_dir dir;
    auto store = open_store(dir);
    std::filesystem::path kept;
    {
        auto a = store.create_spool();
        auto b = store.create_spool();
        REQUIRE(a);
        REQUIRE(b);
        CHECK(a->path() != b->path());
        CHECK(a->path().parent_path() == dir / "tmp");
        CHECK(count_files(dir / "tmp") == 2);
        kept = b->release();
    }
    CHECK(count_files(dir / "tmp") == 1);
    CHECK(std::filesystem::exists(kept));
}

TEST_CASE("blob_store: spool files and claims are locked while their owner lives, so the sweep keeps them", "[blob_store]") {
    temp_dir dir;
    auto store = open_store(dir);
    auto spool = spool_with(store, "arriving");
    auto claim = store.claim_blob(crypto::sha256_hex("arriving"));
    REQUIRE(claim);
    CHECK(claim->path().filename().string().starts_with("claim-" + crypto::sha256_hex("arriving") + "-"));
    // Locked by us, as by any process: a second open file description cannot take the lock.
    const int other = ::open(spool.path().c_str(), O_RDONLY);
    REQUIRE(other >= 0);
    CHECK(::flock(other, LOCK_EX | LOCK_NB) != 0);
    ::close(other);

    int settled = 0;
    auto report = store.sweep_spool([&](std::string_view) -> result<bool> {
        ++settled;
        return true;
    });
    REQUIRE(report);
    CHECK(report->kept == 2);
    CHECK(report->removed == 0);
    CHECK(settled == 0);
    CHECK(std::filesystem::exists(spool.path()));
    CHECK(std::filesystem::exists(claim->path()));
}

TEST_CASE("blob_store: a claim made from the spool is a second name of it, held by the spool's lock, with no inode of its own",
          "[blob_store]") {
    temp_dir dir;
    auto store = open_store(dir);
    auto spool = spool_with(store, "arriving");
    const auto sha256 = crypto::sha256_hex("arriving");
    auto claim = store.claim_blob(sha256, spool);
    REQUIRE(claim);
    CHECK(claim->path().filename().string().starts_with("claim-" + sha256 + "-"));
    struct stat spool_info {}, claim_info {};
    REQUIRE(::stat(spool.path().c_str(), &spool_info) == 0);
    REQUIRE(::stat(claim->path().c_str(), &claim_info) == 0);
    CHECK(claim_info.st_ino == spool_info.st_ino);  // made and removed, it frees no inode

    auto keep_all = [](std::string_view) -> result<bool> { return false; };
    auto report = store.sweep_spool(keep_all);
    REQUIRE(report);
    CHECK(report->kept == 2);  // locked while the spool is held
    const auto left = claim->release();
    (void)spool.release();  // the process dies: the spool's lock goes, and the claim's with it
    report = store.sweep_spool(keep_all);
    REQUIRE(report);
    CHECK(report->removed == 2);
    CHECK_FALSE(std::filesystem::exists(left));
}

TEST_CASE("blob_store: the sweep removes what a process that is gone left, settling its claims first", "[blob_store]") {
    temp_dir dir;
    auto store = open_store(dir);
    const std::string bytes = "put in place, never listed";
    const std::string sha256 = crypto::sha256_hex(bytes);
    // What a process killed between putting a blob and committing its row leaves: its spool and
    // claim with their locks gone (release() lets go of the lock and keeps the file).
    auto spool = spool_with(store, bytes);
    REQUIRE(store.put_blob(sha256, spool.path(), storage::durability::at_sync));
    const auto dead_spool = spool.release();
    const auto dead_claim = store.claim_blob(sha256)->release();
    // An older wheelhouse named its spool files by PID; the PID does not matter any more.
    const auto legacy = dir / "tmp" / ("spool-" + std::to_string(dead_pid()) + "-00ff");
    write_file(legacy, "left by a crash");
    const auto foreign = dir / "tmp" / "notes.txt";
    write_file(foreign, "not ours");

    std::vector<std::string> asked;
    auto report = store.sweep_spool([&](std::string_view claimed) -> result<bool> {
        asked.emplace_back(claimed);
        CHECK(std::filesystem::exists(dead_claim));  // the claim outlives the blob it covers
        REQUIRE(store.remove(claimed));
        return true;
    });
    REQUIRE(report);
    CHECK(asked == std::vector<std::string>{sha256});
    CHECK(report->removed == 3);
    CHECK(report->blobs_released == 1);
    CHECK(report->kept == 0);
    CHECK_FALSE(store.has_blob(sha256));
    CHECK_FALSE(std::filesystem::exists(dead_spool));
    CHECK_FALSE(std::filesystem::exists(dead_claim));
    CHECK_FALSE(std::filesystem::exists(legacy));
    CHECK(std::filesystem::exists(foreign));
}

TEST_CASE("blob_store: a claim whose settling fails stays for the next sweep", "[blob_store]") {
    temp_dir dir;
    auto store = open_store(dir);
    const auto dead_claim = store.claim_blob(crypto::sha256_hex("x"))->release();
    auto report = store.sweep_spool(
        [](std::string_view) -> result<bool> { return make_error(error_kind::unavailable, "catalog locked"); });
    REQUIRE(report);
    CHECK(report->kept == 1);
    CHECK(std::filesystem::exists(dead_claim));
    report = store.sweep_spool([](std::string_view) -> result<bool> { return false; });  // a row names it: kept
    REQUIRE(report);
    CHECK(report->removed == 1);
    CHECK(report->blobs_released == 0);
    CHECK_FALSE(std::filesystem::exists(dead_claim));
}

TEST_CASE("blob_store: puts left to a later sync are in place at once, and sync() makes them durable", "[blob_store]") {
    temp_dir dir;
    auto store = open_store(dir);
    auto spool = spool_with(store, "batched");
    const auto sha256 = crypto::sha256_hex("batched");
    auto put = store.put_blob(sha256, spool.path(), storage::durability::at_sync);
    REQUIRE(put);
    CHECK(*put == storage::put_outcome::created);
    auto metadata = store.put_metadata(sha256, "Name: batched\n", storage::durability::at_sync);
    REQUIRE(metadata);
    CHECK(read_file(store.blob_path(sha256)) == "batched");
    CHECK(read_file(store.metadata_path(sha256)) == "Name: batched\n");
    CHECK(store.sync());
}

TEST_CASE("blob_store: a blob is never visible partially written", "[blob_store]") {
    temp_dir dir;
    auto store = open_store(dir);
    const std::string bytes(8 << 20, 'z');
    const std::string sha256 = crypto::sha256_hex(bytes);
    auto spool = spool_with(store, bytes);
    std::atomic<bool> done{false};
    std::atomic<int> partial_sightings{0};
    std::thread watcher([&] {
        const auto path = store.blob_path(sha256);
        while (!done) {
            struct stat info {};
            if (::stat(path.c_str(), &info) == 0 && static_cast<std::size_t>(info.st_size) != bytes.size()) {
                ++partial_sightings;
            }
        }
    });
    auto put = store.put_blob(sha256, spool.path());
    done = true;
    watcher.join();
    REQUIRE(put);
    CHECK(partial_sightings == 0);
    CHECK(std::filesystem::file_size(store.blob_path(sha256)) == bytes.size());
}
