#include <catch2/catch.hpp>

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <thread>

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

TEST_CASE("blob_store: open_blob reads the bytes, a missing blob is not_found", "[blob_store]") {
    temp_dir dir;
    auto store = open_store(dir);
    const std::string bytes(100'000, 'q');
    const std::string sha256 = crypto::sha256_hex(bytes);
    auto spool = spool_with(store, bytes);
    REQUIRE(store.put_blob(sha256, spool.path()));
    auto reader = store.open_blob(sha256);
    REQUIRE(reader);
    CHECK(reader->size() == bytes.size());
    std::string read_back;
    std::vector<std::uint8_t> buffer(4096);
    for (;;) {
        auto count = reader->read(buffer);
        REQUIRE(count);
        if (*count == 0) break;
        read_back.append(reinterpret_cast<const char*>(buffer.data()), *count);
    }
    CHECK(read_back == bytes);
    auto missing = store.open_blob(crypto::sha256_hex("nope"));
    REQUIRE_FALSE(missing);
    CHECK(missing.error().kind == error_kind::not_found);
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

TEST_CASE("blob_store: the sweep removes spool files of dead processes and old ones, nothing else", "[blob_store]") {
    temp_dir dir;
    auto store = open_store(dir);
    auto young = store.create_spool();  // ours, alive, new: kept
    REQUIRE(young);
    auto old = store.create_spool();  // ours, alive, but older than the limit: removed
    REQUIRE(old);
    std::filesystem::last_write_time(old->path(), std::filesystem::file_time_type::clock::now() - std::chrono::hours(2));
    const auto orphan = dir / "tmp" / ("spool-" + std::to_string(dead_pid()) + "-00ff");
    write_file(orphan, "left by a crash");
    const auto foreign = dir / "tmp" / "notes.txt";
    write_file(foreign, "not ours");

    auto report = store.sweep_spool(std::chrono::hours(1));
    REQUIRE(report);
    CHECK(report->removed == 2);
    CHECK(report->kept == 1);
    CHECK(std::filesystem::exists(young->path()));
    CHECK_FALSE(std::filesystem::exists(old->path()));
    CHECK_FALSE(std::filesystem::exists(orphan));
    CHECK(std::filesystem::exists(foreign));
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
