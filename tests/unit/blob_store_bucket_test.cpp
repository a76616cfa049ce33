// blob_store with an object store for the index's own files: what goes to the bucket, what
// stays on disk, and DATA/bucket, which keeps a folder from being used without its bucket.
// The bucket here is a map; the real one (radosgw) is tests/e2e/test_s3_store.py's.
#include <catch2/catch.hpp>

#include <map>
#include <mutex>

#include "test_support.hpp"
#include "wheelhouse/crypto/hasher.hpp"
#include "wheelhouse/storage/blob_store.hpp"

using namespace wheelhouse;
using wheelhouse::testing::count_files;
using wheelhouse::testing::read_file;
using wheelhouse::testing::temp_dir;
using wheelhouse::testing::write_file;

namespace {

class map_bucket final : public storage::object_store {
public:
    explicit map_bucket(std::string name) : name_(std::move(name)) {}
    std::string describe() const override { return name_; }
    result<void> put(std::string_view sha256, const std::filesystem::path& file,
                     const storage::part_digests*) override {
        if (down) return make_error(error_kind::unavailable, "down");
        std::lock_guard lock(mutex_);
        objects[std::string(sha256)] = read_file(file);
        return {};
    }
    result<std::optional<storage::stored_object>> look_up(std::string_view sha256) override {
        if (down) return make_error(error_kind::unavailable, "down");
        std::lock_guard lock(mutex_);
        const auto found = objects.find(std::string(sha256));
        if (found == objects.end()) return std::optional<storage::stored_object>();
        return std::optional(storage::stored_object{found->second.size(), found->first});
    }
    result<storage::file_digest> copy_out(std::string_view sha256, std::uint64_t size,
                                          const std::filesystem::path& target, unsigned mode) override {
        if (down) return make_error(error_kind::unavailable, "down");
        std::lock_guard lock(mutex_);
        const auto found = objects.find(std::string(sha256));
        if (found == objects.end()) return make_error(error_kind::not_found, "no object");
        if (auto written = storage::write_new_file(target, found->second.substr(0, size), mode); !written)
            return written.error();
        return storage::hash_file(target);
    }
    result<void> remove(std::string_view sha256) override {
        if (down) return make_error(error_kind::unavailable, "down");
        std::lock_guard lock(mutex_);
        objects.erase(std::string(sha256));
        return {};
    }
    result<void> list(const std::function<result<void>(std::string_view, std::uint64_t)>& each) override {
        for (const auto& [sha256, bytes] : objects) {
            if (auto done = each(sha256, bytes.size()); !done) return done;
        }
        return {};
    }
    std::string download_url(std::string_view sha256, std::chrono::seconds) const override {
        return "https://bucket.example/" + std::string(sha256);
    }

    std::map<std::string, std::string> objects;
    bool down = false;

private:
    std::string name_;
    std::mutex mutex_;
};

const std::string sha_of_wheel = crypto::sha256_hex("wheel bytes");

}  // namespace

TEST_CASE("with a bucket, the index's own files go there, and METADATA and removals follow") {
    temp_dir dir;
    auto bucket = std::make_shared<map_bucket>("s3://wheels/team/ at https://s3.example");
    auto store = storage::blob_store::open(dir.path(), bucket);
    REQUIRE(store);
    auto spool = store->create_spool();
    REQUIRE(spool);
    write_file(spool->path(), "wheel bytes");

    CHECK(store->has_owned(sha_of_wheel).value() == false);
    REQUIRE(store->put_owned(sha_of_wheel, spool->path(), storage::durability::now, nullptr));
    CHECK(bucket->objects.at(sha_of_wheel) == "wheel bytes");
    CHECK_FALSE(store->has_blob(sha_of_wheel));  // nothing of it under blobs/
    CHECK(store->has_owned(sha_of_wheel).value());
    REQUIRE(store->put_metadata(sha_of_wheel, "Name: x\n"));
    CHECK(store->has_metadata(sha_of_wheel));

    REQUIRE(store->remove(sha_of_wheel));
    CHECK(bucket->objects.empty());
    CHECK_FALSE(store->has_metadata(sha_of_wheel));
}

TEST_CASE("with a bucket, sync() passes over METADATA and directories removed since their put") {
    temp_dir dir;
    auto store = storage::blob_store::open(dir.path(), std::make_shared<map_bucket>("s3://wheels/ at https://s3.example"));
    REQUIRE(store);
    const auto kept = crypto::sha256_hex("kept");
    const auto gone = crypto::sha256_hex("gone");
    REQUIRE(store->put_metadata(kept, "Name: kept\n", storage::durability::at_sync));
    REQUIRE(store->put_metadata(gone, "Name: gone\n", storage::durability::at_sync));
    REQUIRE(store->remove(gone));
    std::filesystem::remove_all(store->metadata_path(gone).parent_path().parent_path());
    CHECK(store->sync());
    CHECK(read_file(store->metadata_path(kept)) == "Name: kept\n");
    CHECK(store->sync());  // nothing left to sync but tmp/
}

TEST_CASE("a bucket that fails is an error, never a file put on the disk instead") {
    temp_dir dir;
    auto bucket = std::make_shared<map_bucket>("s3://wheels/ at https://s3.example");
    auto store = storage::blob_store::open(dir.path(), bucket);
    REQUIRE(store);
    auto spool = store->create_spool();
    REQUIRE(spool);
    write_file(spool->path(), "wheel bytes");
    bucket->down = true;
    const auto put = store->put_owned(sha_of_wheel, spool->path(), storage::durability::now, nullptr);
    REQUIRE_FALSE(put);
    CHECK(put.error().kind == error_kind::unavailable);
    CHECK_FALSE(store->has_owned(sha_of_wheel));
    CHECK(count_files(dir.path() / "blobs") == 0);
}

TEST_CASE("DATA/bucket: a folder is used with the bucket it names, or by commands that leave its files alone") {
    temp_dir dir;
    auto bucket = std::make_shared<map_bucket>("s3://wheels/team/ at https://s3.example");
    REQUIRE(storage::blob_store::open(dir.path(), bucket));
    CHECK(storage::recorded_bucket(dir.path()).value() == bucket->describe());
    CHECK(read_file(dir.path() / "bucket") == bucket->describe() + "\n");
    // Again with the same bucket: fine.
    REQUIRE(storage::blob_store::open(dir.path(), bucket));

    const auto without = storage::blob_store::open(dir.path());
    REQUIRE_FALSE(without);
    CHECK(without.error().message.starts_with("serve this data folder with the s3-* settings of " + bucket->describe()));
    CHECK(storage::blob_store::open(dir.path(), nullptr, storage::owned_bytes::untouched));

    const auto other = storage::blob_store::open(dir.path(), std::make_shared<map_bucket>("s3://other/ at https://x"));
    REQUIRE_FALSE(other);
    CHECK(other.error().message.starts_with("give the bucket this data folder's files are in, " + bucket->describe()));

    temp_dir plain;
    REQUIRE(storage::blob_store::open(plain.path()));
    CHECK(storage::recorded_bucket(plain.path()).value().empty());
}
