// spool_target with a bucket: the digest of each part the bucket takes is taken as the bytes
// arrive, whatever the cut of the body into appends, and a put begun while the body arrives hears
// each part's digest before the file grows past that part's end. The bucket here takes parts of
// 1 MiB and records what its put hears; the real one (radosgw) is tests/e2e/test_s3_store.py's.
#include <catch2/catch.hpp>

#include <mutex>
#include <string>
#include <vector>

#include "test_support.hpp"
#include "wheelhouse/app/upload_sinks.hpp"
#include "wheelhouse/crypto/hasher.hpp"
#include "wheelhouse/storage/blob_store.hpp"

using namespace wheelhouse;
using wheelhouse::testing::temp_dir;

namespace {

constexpr std::uint64_t part_bytes = 1 << 20;

struct put_log {
    std::mutex mutex;
    std::vector<std::string> digests;   // in the order heard
    std::vector<std::uint64_t> size_at;  // the file's size each digest was heard at
    std::uint64_t size = 0;
    bool ended = false;
};

class recording_put final : public storage::growing_put {
public:
    explicit recording_put(put_log& log) : log_(log) {}
    void part_hashed(std::string sha256) noexcept override {
        std::lock_guard lock(log_.mutex);
        log_.digests.push_back(std::move(sha256));
        log_.size_at.push_back(log_.size);
    }
    void grew_to(std::uint64_t size) noexcept override {
        std::lock_guard lock(log_.mutex);
        log_.size = size;
    }
    void ended() noexcept override {
        std::lock_guard lock(log_.mutex);
        log_.ended = true;
    }
    result<void> finish() override { return {}; }
    storage::leftovers left() const noexcept override { return storage::leftovers::none; }
    void abandon(std::function<void(storage::leftovers)> settled) noexcept override {
        if (settled) settled(storage::leftovers::none);
    }

private:
    put_log& log_;
};

class part_bucket final : public storage::object_store {
public:
    explicit part_bucket(put_log& log) : log_(log) {}
    std::string describe() const override { return "s3://parts/ at https://s3.example"; }
    std::uint64_t part_size_for(std::uint64_t) const override { return part_bytes; }
    std::unique_ptr<storage::growing_put> put_as_written(std::string_view, const std::filesystem::path&,
                                                         std::uint64_t) override {
        return std::make_unique<recording_put>(log_);
    }
    result<void> put(std::string_view, const std::filesystem::path&, const storage::part_digests*) override {
        return unused();
    }
    result<std::optional<storage::stored_object>> look_up(std::string_view) override {
        return std::optional<storage::stored_object>();
    }
    result<storage::file_digest> copy_out(std::string_view, std::uint64_t, const std::filesystem::path&,
                                          unsigned) override {
        return unused();
    }
    result<void> remove(std::string_view) override { return {}; }
    result<void> list(const std::function<result<void>(std::string_view, std::uint64_t)>&) override { return {}; }
    std::string download_url(std::string_view, std::chrono::seconds) const override { return {}; }

private:
    static error unused() { return make_error(error_kind::internal, "not used by these tests"); }
    put_log& log_;
};

// Bytes that differ from part to part, so a digest of the wrong slice cannot match.
std::string body_of(std::size_t size) {
    std::string body(size, '\0');
    for (std::size_t i = 0; i < size; ++i) body[i] = static_cast<char>((i * 2654435761u) >> 13);
    return body;
}

std::vector<std::string> digests_of_parts(std::string_view body) {
    std::vector<std::string> digests;
    for (std::size_t at = 0; at < body.size(); at += part_bytes)
        digests.push_back(crypto::sha256_hex(body.substr(at, part_bytes)));
    return digests;
}

app::received_upload spooled(const storage::blob_store& store, std::string_view body, std::size_t cut,
                             std::optional<std::string> declared = std::nullopt) {
    auto target = app::spool_target::create(store, 64 * part_bytes);
    REQUIRE(target);
    if (declared) target->send_early_if([&declared]() -> std::optional<std::string_view> { return *declared; });
    for (std::size_t at = 0; at < body.size(); at += cut)
        REQUIRE(target->append({body.data() + at, std::min(cut, body.size() - at)}));
    target->ended();
    return target->release();
}

}  // namespace

TEST_CASE("a spool's part digests are its bytes' as they arrived, however the body is cut") {
    temp_dir dir;
    put_log log;
    auto store = storage::blob_store::open(dir.path(), std::make_shared<part_bucket>(log));
    REQUIRE(store);
    const std::uint64_t sizes[] = {0, 1, part_bytes - 1, part_bytes, part_bytes + 1, 3 * part_bytes + 5};
    const std::size_t cuts[] = {1 << 10, 65536, 100'003, part_bytes, 2 * part_bytes + 7};
    for (const auto size : sizes) {
        const auto body = body_of(size);
        for (const auto cut : cuts) {
            const auto received = spooled(*store, body, cut);
            CAPTURE(size, cut);
            CHECK(received.digests.sha256 == crypto::sha256_hex(body));
            CHECK(received.digests.parts.part_size == part_bytes);
            CHECK(received.digests.parts.sha256 == digests_of_parts(body));
            CHECK(received.early == nullptr);  // none declared
        }
    }
}

TEST_CASE("a put begun while the body arrives hears each part's digest before the file passes its end") {
    temp_dir dir;
    put_log log;
    auto store = storage::blob_store::open(dir.path(), std::make_shared<part_bucket>(log));
    REQUIRE(store);
    const auto body = body_of(storage::put_as_written_from + 2 * part_bytes + 3);  // begun at 16 MiB
    const auto received = spooled(*store, body, 100'003, crypto::sha256_hex(body));
    REQUIRE(received.early != nullptr);
    CHECK(log.digests == digests_of_parts(body));
    CHECK(log.ended);
    for (std::size_t part = 0; part < log.digests.size(); ++part) {
        CAPTURE(part);
        CHECK(log.size_at[part] < (part + 1) * part_bytes);  // told before the put saw the file reach its end
    }
}

TEST_CASE("without a bucket, no part digests are taken") {
    temp_dir dir;
    auto store = storage::blob_store::open(dir.path());
    REQUIRE(store);
    const auto body = body_of(3 * part_bytes);
    const auto received = spooled(*store, body, 65536);
    CHECK(received.digests.sha256 == crypto::sha256_hex(body));
    CHECK(received.digests.parts.part_size == 0);
    CHECK(received.digests.parts.sha256.empty());
}
