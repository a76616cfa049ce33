#include <catch2/catch.hpp>

#include <algorithm>
#include <random>

#include "test_support.hpp"
#include "wheelhouse/catalog/catalog.hpp"
#include "wheelhouse/crypto/hasher.hpp"
#include "wheelhouse/ingest/ingester.hpp"
#include "wheelhouse/ingest/range_cache.hpp"
#include "wheelhouse/ingest/wheel_validation.hpp"
#include "wheelhouse/ingest/zip_tail.hpp"
#include "zip_builder.hpp"

using namespace wheelhouse;
using namespace wheelhouse::testing;

namespace {

// A range reader over bytes held here, as a remote server would serve them, counting requests.
struct served_bytes {
    std::string bytes;
    std::uint64_t requests = 0;
    std::uint64_t served = 0;

    ingest::range_cache cache(std::uint64_t readahead = 64 * 1024) {
        return ingest::range_cache(bytes.size(), [this](std::uint64_t offset, std::uint64_t length) -> result<std::string> {
            ++requests;
            served += length;
            return bytes.substr(static_cast<std::size_t>(offset), static_cast<std::size_t>(length));
        }, readahead);
    }
};

std::string incompressible(std::size_t size) {
    std::mt19937_64 generator(42);
    std::string out(size, '\0');
    for (auto& c : out) c = static_cast<char>(generator());
    return out;
}

// demo-1.0 with a large incompressible shared object first, as real native wheels lay out.
std::string big_wheel(std::size_t payload) {
    wheel_spec spec;
    spec.files = {{"demo/_native.so", incompressible(payload)}, {"demo/__init__.py", "VALUE = 1\n"}};
    return build_wheel(spec);
}

const auto demo_name = pep427::parse_wheel_filename("demo-1.0-py3-none-any.whl").value();

void check_refused(const result<ingest::wheel_archive>& read, error_kind kind, const std::string& message) {
    REQUIRE_FALSE(read);
    CHECK(read.error().kind == kind);
    CHECK_THAT(read.error().message, Catch::Contains(message));
}

std::uint64_t u32_at(const std::string& bytes, std::size_t at) {
    std::uint64_t value = 0;
    for (int i = 3; i >= 0; --i) value = (value << 8) | static_cast<unsigned char>(bytes[at + static_cast<std::size_t>(i)]);
    return value;
}

void put_le(std::string& out, std::uint64_t value, int width) {
    for (int i = 0; i < width; ++i) out.push_back(static_cast<char>((value >> (8 * i)) & 0xff));
}

// The same archive with ZIP64 end records, as writers make them for wheels past 4 GiB: the
// classic end record's fields all 0xFF..., the true ones in the ZIP64 record its locator names.
std::string with_zip64_end(const std::string& bytes) {
    const std::size_t end = bytes.rfind("PK\x05\x06");
    const std::uint64_t entries = static_cast<unsigned char>(bytes[end + 10]) | (static_cast<unsigned char>(bytes[end + 11]) << 8);
    const std::uint64_t size = u32_at(bytes, end + 12);
    const std::uint64_t offset = u32_at(bytes, end + 16);
    std::string out = bytes.substr(0, end);
    const std::uint64_t record_offset = out.size();
    put_le(out, 0x06064b50, 4);
    put_le(out, 44, 8);  // the record's size after this field
    put_le(out, 45, 2);
    put_le(out, 45, 2);
    put_le(out, 0, 4);
    put_le(out, 0, 4);
    put_le(out, entries, 8);
    put_le(out, entries, 8);
    put_le(out, size, 8);
    put_le(out, offset, 8);
    put_le(out, 0x07064b50, 4);
    put_le(out, 0, 4);
    put_le(out, record_offset, 8);
    put_le(out, 1, 4);
    put_le(out, 0x06054b50, 4);
    put_le(out, 0, 2);
    put_le(out, 0, 2);
    put_le(out, 0xffff, 2);
    put_le(out, 0xffff, 2);
    put_le(out, 0xffffffff, 4);
    put_le(out, 0xffffffff, 4);
    put_le(out, 0, 2);
    return out;
}

}  // namespace

TEST_CASE("remote archive: ZIP64 end records are followed", "[remote_archive]") {
    const std::string zip64 = with_zip64_end(big_wheel(100'000));
    served_bytes file{zip64};
    auto cache = file.cache();
    auto located = ingest::locate_central_directory(cache, 64 << 20, 1000);
    REQUIRE(located);
    CHECK(located->zip64);
    CHECK(located->entries == 5);
    auto validated = ingest::validate_remote_wheel(cache, demo_name);
    REQUIRE(validated);
    CHECK(validated->archive.metadata == wheel_spec{}.metadata);

    SECTION("a locator pointing outside the file") {
        std::string broken = zip64;
        const std::size_t locator = broken.size() - 22 - 20;
        for (int i = 0; i < 8; ++i) broken[locator + 8 + static_cast<std::size_t>(i)] = '\x7f';
        served_bytes bad{broken};
        auto bad_cache = bad.cache();
        check_refused(ingest::read_remote_wheel_archive(bad_cache), error_kind::invalid,
                      "the ZIP64 end-of-central-directory locator points to offset");
    }
}

TEST_CASE("range_cache: reads come from fetched ranges, each byte fetched once", "[remote_archive]") {
    served_bytes file{incompressible(300'000)};
    auto cache = file.cache(1000);
    auto first = cache.read(100, 10);
    REQUIRE(first);
    CHECK(*first == file.bytes.substr(100, 10));
    CHECK(cache.bytes_fetched() == 1000);  // read ahead
    auto again = cache.read(500, 500);     // inside the first fetch
    REQUIRE(again);
    CHECK(*again == file.bytes.substr(500, 500));
    CHECK(cache.fetch_count() == 1);
    auto spanning = cache.read(900, 2000);  // half held: only the rest is fetched
    REQUIRE(spanning);
    CHECK(*spanning == file.bytes.substr(900, 2000));
    CHECK(cache.bytes_fetched() == 1000 + 1800);  // from the held end, read ahead again
    cache.seed(200'000, file.bytes.substr(200'000));
    auto tail = cache.read(250'000, 50'000);
    REQUIRE(tail);
    CHECK(*tail == file.bytes.substr(250'000));
    CHECK(cache.fetch_count() == 2);
    auto past = cache.read(299'990, 11);
    REQUIRE_FALSE(past);
    CHECK_THAT(past.error().message, Catch::Contains("runs past the end of the 300000-byte file"));
}

TEST_CASE("remote archive: a wheel is read from its end, directory and dist-info only", "[remote_archive]") {
    served_bytes file{big_wheel(4 << 20)};
    auto cache = file.cache();
    auto validated = ingest::validate_remote_wheel(cache, demo_name);
    REQUIRE(validated);
    CHECK(validated->archive.dist_info == "demo-1.0.dist-info");
    CHECK(validated->archive.metadata == wheel_spec{}.metadata);
    CHECK(validated->metadata.name() == "demo");
    CHECK_FALSE(validated->archive.entries_verified);
    CHECK(validated->archive.entry_count == 5);
    // The 4 MiB payload is never read: a few readaheads of 64 KiB at most.
    INFO("fetched " << cache.bytes_fetched() << " of " << file.bytes.size() << " in " << cache.fetch_count() << " requests");
    CHECK(cache.bytes_fetched() < 200 * 1024);
    CHECK(cache.fetch_count() <= 4);
    CHECK(file.served == cache.bytes_fetched());
}

TEST_CASE("remote archive: what the filename says is held to METADATA, as for uploads", "[remote_archive]") {
    served_bytes file{big_wheel(1000)};
    auto cache = file.cache();
    auto other = ingest::validate_remote_wheel(cache, pep427::parse_wheel_filename("demo-1.1-py3-none-any.whl").value());
    REQUIRE_FALSE(other);
    CHECK_THAT(other.error().message, Catch::Contains("METADATA says Version: 1.0, but the filename says 1.1"));
}

TEST_CASE("remote archive: a variant wheel's variant.json is read by range, like METADATA", "[remote_archive][pep825]") {
    const std::string variant_json =
        R"({"$schema": "https://variants-schema.wheelnext.dev/peps/825/v0.1.1.json", )"
        R"("default-priorities": {"namespace": ["nvidia"]}, )"
        R"("variants": {"cu128": {"nvidia": {"cuda_version_lower_bound": ["12.8"]}}}})";
    wheel_spec spec;
    spec.files = {{"demo/_native.so", incompressible(2 << 20)}, {"demo-1.0.dist-info/variant.json", variant_json}};
    served_bytes file{build_wheel(spec)};
    auto cache = file.cache();
    const auto labelled = pep427::parse_wheel_filename("demo-1.0-py3-none-any-cu128.whl").value();
    auto validated = ingest::validate_remote_wheel(cache, labelled);
    if (!validated) FAIL(validated.error().message);
    CHECK(validated->archive.variant_json == variant_json);
    REQUIRE(validated->variant.has_value());
    CHECK(validated->variant->variants.contains("cu128"));
    CHECK(cache.bytes_fetched() < 200 * 1024);  // the 2 MiB payload is never read

    // Another label than variant.json's is refused, as for an upload.
    auto cache_again = file.cache();
    auto other = ingest::validate_remote_wheel(cache_again, pep427::parse_wheel_filename("demo-1.0-py3-none-any-cu130.whl").value());
    REQUIRE_FALSE(other);
    CHECK_THAT(other.error().message, Catch::Contains("must list exactly the filename's label 'cu130'"));
}

TEST_CASE("remote archive: a variant.json past the byte limit is refused by its declared size, never fetched",
          "[remote_archive][pep825]") {
    // A valid variant.json padded to 2 MiB with mixed whitespace, which deflates only about 4:1.
    std::string padded = R"({"$schema": "https://variants-schema.wheelnext.dev/peps/825/v0.1.1.json", )"
                         R"("default-priorities": {"namespace": ["nvidia"]}, "variants": {"cu128": {}})";
    std::mt19937_64 generator(825);
    while (padded.size() < (2u << 20)) padded.push_back(" \t\r\n"[generator() % 4]);
    padded.push_back('}');
    wheel_spec spec;
    spec.files = {{"demo/__init__.py", "VALUE = 1\n"}, {"demo-1.0.dist-info/variant.json", padded}};
    served_bytes file{build_wheel(spec)};
    auto cache = file.cache();
    const auto labelled = pep427::parse_wheel_filename("demo-1.0-py3-none-any-cu128.whl").value();
    auto refused = ingest::validate_remote_wheel(cache, labelled);
    REQUIRE_FALSE(refused);
    CHECK(refused.error().kind == error_kind::invalid);
    CHECK_THAT(refused.error().message,
               Catch::StartsWith("fix variant.json and rebuild the wheel: keep variant.json within 65536 bytes: it is " +
                                 std::to_string(padded.size())));
    INFO("fetched " << cache.bytes_fetched() << " of " << file.bytes.size());
    CHECK(cache.bytes_fetched() < 200 * 1024);
}

TEST_CASE("remote archive: not a zip, truncated or oversized directories are refused precisely", "[remote_archive]") {
    SECTION("not a zip") {
        served_bytes file{incompressible(100'000)};
        auto cache = file.cache();
        check_refused(ingest::read_remote_wheel_archive(cache), error_kind::invalid,
                      "no end-of-central-directory record in its last 65577 bytes");
    }
    SECTION("too short") {
        served_bytes file{"PK"};
        auto cache = file.cache();
        check_refused(ingest::read_remote_wheel_archive(cache), error_kind::invalid, "too short to be a zip archive");
    }
    const std::string whole = big_wheel(200'000);
    const std::size_t end = whole.rfind("PK\x05\x06");
    REQUIRE(end != std::string::npos);
    const std::size_t directory_size = u32_at(whole, end + 12);
    const std::size_t directory_offset = u32_at(whole, end + 16);
    SECTION("a directory cut short") {
        served_bytes file{whole.substr(0, directory_offset + directory_size / 2) + whole.substr(end)};
        auto cache = file.cache();
        check_refused(ingest::read_remote_wheel_archive(cache), error_kind::invalid,
                      "the zip central directory is truncated: the end record says it spans " +
                          std::to_string(directory_size) + " bytes from offset " + std::to_string(directory_offset));
    }
    SECTION("an oversized directory") {
        served_bytes file{whole};
        auto cache = file.cache();
        ingest::archive_limits limits;
        limits.max_central_directory = 100;
        check_refused(ingest::read_remote_wheel_archive(cache, limits), error_kind::too_large,
                      "the zip central directory is " + std::to_string(directory_size) +
                          " bytes, past the limit of 100 bytes");
    }
    SECTION("too many entries") {
        served_bytes file{whole};
        auto cache = file.cache();
        ingest::archive_limits limits;
        limits.max_entries = 3;
        check_refused(ingest::read_remote_wheel_archive(cache, limits), error_kind::too_large,
                      "the archive has 5 entries, past the limit of 3");
    }
}

TEST_CASE("remote archive: the directory's checks run as for a local wheel", "[remote_archive]") {
    SECTION("unsafe names") {
        auto entries = wheel_entries({});
        entries.push_back({"../evil.py", "x"});
        served_bytes file{build_zip(entries)};
        auto cache = file.cache();
        check_refused(ingest::read_remote_wheel_archive(cache), error_kind::invalid, "contains '..'");
    }
    SECTION("no RECORD") {
        auto entries = wheel_entries({});
        std::erase_if(entries, [](const zip_entry& entry) { return entry.name.ends_with("/RECORD"); });
        served_bytes file{build_zip(entries)};
        auto cache = file.cache();
        check_refused(ingest::read_remote_wheel_archive(cache), error_kind::invalid, "demo-1.0.dist-info/RECORD is missing");
    }
    SECTION("two dist-infos") {
        auto entries = wheel_entries({});
        entries.push_back({"other-1.0.dist-info/METADATA", "x"});
        served_bytes file{build_zip(entries)};
        auto cache = file.cache();
        check_refused(ingest::read_remote_wheel_archive(cache), error_kind::invalid, "2 .dist-info directories");
    }
    SECTION("WHEEL version 2") {
        wheel_spec spec;
        spec.wheel = "Wheel-Version: 2.0\n";
        served_bytes file{build_wheel(spec)};
        auto cache = file.cache();
        check_refused(ingest::read_remote_wheel_archive(cache), error_kind::invalid, "only version 1.x wheels");
    }
    SECTION("a compression ratio of a zip bomb") {
        served_bytes file{build_wheel({})};
        auto cache = file.cache();
        ingest::archive_limits limits;
        limits.ratio_floor = 1000;
        limits.max_compression_ratio = 5;
        check_refused(ingest::read_remote_wheel_archive(cache, limits), error_kind::invalid,
                      "entry demo/_native.so would inflate from");
    }
    SECTION("a METADATA whose bytes disagree with its CRC") {
        auto entries = wheel_entries({});
        for (auto& entry : entries) entry.stored = true;
        std::string bytes = build_zip(entries);
        const auto at = bytes.find("Summary: A demo");
        REQUIRE(at != std::string::npos);
        bytes[at + 9] = 'B';
        served_bytes file{bytes};
        auto cache = file.cache();
        check_refused(ingest::read_remote_wheel_archive(cache), error_kind::invalid,
                      "entry demo-1.0.dist-info/METADATA is corrupt: CRC error");
    }
}

TEST_CASE("remote archive: a failed range request is reported as it was", "[remote_archive]") {
    // METADATA first, far from the end, so reading it needs a request after the tail's.
    wheel_spec spec;
    spec.files = {{"demo/_native.so", incompressible(200'000)}};
    auto entries = wheel_entries(spec);
    std::stable_partition(entries.begin(), entries.end(), [](const zip_entry& entry) { return entry.name.ends_with("/METADATA"); });
    const std::string bytes = build_zip(entries);
    int allowed = 1;  // the tail (holding the directory), then the upstream fails
    ingest::range_cache cache(bytes.size(), [&](std::uint64_t offset, std::uint64_t length) -> result<std::string> {
        if (allowed-- <= 0) return make_error(error_kind::upstream, "the storage host answered 500");
        return bytes.substr(static_cast<std::size_t>(offset), static_cast<std::size_t>(length));
    }, 1024);
    auto read = ingest::read_remote_wheel_archive(cache);
    check_refused(read, error_kind::upstream, "the storage host answered 500");
}

TEST_CASE("register_remote: the row an upload makes, served from the URL, METADATA in our store", "[remote_archive]") {
    temp_dir dir;
    auto db = catalog::catalog::open(dir / "catalog.db");
    REQUIRE(db);
    auto store = storage::blob_store::open(dir.path());
    REQUIRE(store);
    ingest::ingester ingester(**db, *store);

    const std::string bytes = big_wheel(10'000);
    const std::string sha256 = crypto::sha256_hex(bytes);
    served_bytes file{bytes};
    auto cache = file.cache();
    auto validated = ingest::validate_remote_wheel(cache, demo_name);
    REQUIRE(validated);
    ingest::remote_file remote;
    remote.url = "https://github.com/o/r/releases/download/v1/demo-1.0-py3-none-any.whl";
    remote.fetch_url = "https://api.github.com/repos/o/r/releases/assets/7";
    remote.mode = catalog::download_mode::redirect;
    remote.sha256 = sha256;
    remote.size = bytes.size();
    remote.uploaded_by = "cli";
    auto added = ingester.register_remote(demo_name, *validated, remote);
    REQUIRE(added);
    CHECK(added->outcome == ingest::ingest_outcome::created);
    auto row = (*db)->find_file("demo-1.0-py3-none-any.whl");
    REQUIRE(row);
    REQUIRE(*row);
    CHECK((*row)->mode == catalog::download_mode::redirect);
    CHECK((*row)->remote_url == remote.url);
    CHECK((*row)->fetch_url == remote.fetch_url);
    CHECK((*row)->sha256 == sha256);
    CHECK((*row)->size == bytes.size());
    CHECK((*row)->metadata_sha256 == crypto::sha256_hex(wheel_spec{}.metadata));
    CHECK(store->has_metadata(sha256));
    CHECK_FALSE(store->has_blob(sha256));

    // An upload of the same bytes makes the same row, but for where it is served from.
    temp_dir other_dir;
    auto other_db = catalog::catalog::open(other_dir / "catalog.db");
    REQUIRE(other_db);
    auto other_store = storage::blob_store::open(other_dir.path());
    REQUIRE(other_store);
    write_file(other_dir / "demo-1.0-py3-none-any.whl", bytes);
    ingest::ingest_options options;
    options.uploaded_by = "cli";
    auto uploaded = ingest::ingester(**other_db, *other_store).ingest_file(other_dir / "demo-1.0-py3-none-any.whl", options);
    REQUIRE(uploaded);
    auto local = uploaded->file;
    CHECK(local.mode == catalog::download_mode::local);
    local.mode = (*row)->mode;
    local.remote_url = (*row)->remote_url;
    local.fetch_url = (*row)->fetch_url;
    local.id = (*row)->id;
    local.upload_time_ms = (*row)->upload_time_ms;
    CHECK(local.project == (*row)->project);
    CHECK(local.python_tag == (*row)->python_tag);
    CHECK(local.summary == (*row)->summary);
    CHECK(local.metadata_size == (*row)->metadata_size);

    SECTION("the same again is present") {
        auto again = ingester.register_remote(demo_name, *validated, remote);
        REQUIRE(again);
        CHECK(again->outcome == ingest::ingest_outcome::identical);
    }
    SECTION("other bytes under the name are a conflict, and leave nothing behind") {
        remote.sha256 = std::string(64, 'a');
        auto clash = ingester.register_remote(demo_name, *validated, remote);
        REQUIRE_FALSE(clash);
        CHECK(clash.error().kind == error_kind::conflict);
        CHECK_THAT(clash.error().message, Catch::Contains("File already exists"));
        CHECK_FALSE(store->has_metadata(remote.sha256));
        auto existing = ingester.find_existing("demo-1.0-py3-none-any.whl", remote.sha256);
        REQUIRE_FALSE(existing);
        CHECK(existing.error().kind == error_kind::conflict);
    }
}
