#include <catch2/catch.hpp>

#include <atomic>
#include <future>
#include <thread>
#include <utility>

#include "test_support.hpp"
#include "wheelhouse/crypto/hasher.hpp"
#include "wheelhouse/error_text.hpp"
#include "wheelhouse/ingest/ingester.hpp"
#include "wheelhouse/sqlite/connection.hpp"
#include "tar_builder.hpp"
#include "zip_builder.hpp"

using namespace wheelhouse;
using namespace wheelhouse::testing;
using ingest::ingest_outcome;

namespace {

std::unique_ptr<catalog::catalog> open_catalog(const temp_dir& dir) {
    auto opened = catalog::catalog::open(dir / "catalog.db");
    REQUIRE(opened);
    return std::move(opened).value();
}

storage::blob_store open_store(const temp_dir& dir) {
    auto opened = storage::blob_store::open(dir.path());
    REQUIRE(opened);
    return std::move(opened).value();
}

// Designated initialisers would be neater, but g++ 12 warns of the members left out.
ingest::ingest_options uploaded_by(std::string name) {
    ingest::ingest_options options;
    options.uploaded_by = std::move(name);
    return options;
}

ingest::ingest_options expecting(std::optional<std::string> sha256, std::optional<std::string> blake2_256,
                                 std::optional<std::string> md5) {
    ingest::ingest_options options;
    options.expected.sha256 = std::move(sha256);
    options.expected.blake2_256 = std::move(blake2_256);
    options.expected.md5 = std::move(md5);
    return options;
}

// A data directory with its catalog, store and ingester, as the server and the CLI hold them.
struct data_dir {
    temp_dir dir;
    std::unique_ptr<catalog::catalog> db = open_catalog(dir);
    storage::blob_store store = open_store(dir);
    ingest::ingester ingester{*db, store};

    storage::spool_file spool(std::string_view bytes) {
        auto spool = store.create_spool();
        REQUIRE(spool);
        write_file(spool->path(), bytes);
        return std::move(spool).value();
    }

    result<ingest::ingest_result> ingest(std::string_view bytes, std::string_view filename,
                                         const ingest::ingest_options& options = uploaded_by("ci")) {
        return ingester.ingest_spool(spool(bytes), filename, options);
    }

    std::int64_t rows() const {
        auto reader = sqlite::connection::open(dir / "catalog.db", {.read_only = true});
        REQUIRE(reader);
        return *reader->query_int64("SELECT count(*) FROM files");
    }
    std::size_t blob_files() const { return count_files(dir / "blobs"); }
    std::size_t spool_files() const { return count_files(dir / "tmp"); }

    // The state a failed ingest must leave unchanged.
    void check_untouched(std::int64_t expected_rows = 0, std::size_t expected_blob_files = 0) const {
        CHECK(rows() == expected_rows);
        CHECK(blob_files() == expected_blob_files);
        CHECK(spool_files() == 0);
    }
};

wheel_spec flash_attn_spec(std::string version = "2.8.3+cu128torch2.8cxx11abiFALSE") {
    wheel_spec spec;
    spec.dist_info = "flash_attn-" + version + ".dist-info";
    spec.metadata = "Metadata-Version: 2.1\nName: flash_attn\nVersion: " + version +
                    "\nSummary: Flash Attention: Fast and Memory-Efficient Exact Attention\nRequires-Python: >=3.9\n\nBody\n";
    spec.files = {{"flash_attn/__init__.py", "__version__ = '2.8.3'\n"}, {"flash_attn_2_cuda.so", std::string(20000, '\x01')}};
    return spec;
}

const std::string flash_attn_filename = "flash_attn-2.8.3+cu128torch2.8cxx11abiFALSE-cp312-cp312-linux_x86_64.whl";

void check_refused(const result<ingest::ingest_result>& ingested, error_kind kind, const std::string& message) {
    REQUIRE_FALSE(ingested);
    CHECK(ingested.error().kind == kind);
    CHECK_THAT(describe(ingested.error()), Catch::Contains(message));
    // twine and poetry show only the reason phrase: every refusal's message fits it whole.
    CHECK(reason_of(ingested.error()).size() <= reason_budget);
}

}  // namespace

TEST_CASE("ingester: a wheel becomes a row, a blob and its METADATA, and the spool is gone", "[ingester]") {
    data_dir data;
    const auto spec = flash_attn_spec();
    const auto bytes = build_wheel(spec);
    auto ingested = data.ingest(bytes, flash_attn_filename);
    REQUIRE(ingested);
    CHECK(ingested->outcome == ingest_outcome::created);

    const auto& file = ingested->file;
    CHECK(file.id > 0);
    CHECK(file.project == "flash-attn");
    CHECK(file.filename == flash_attn_filename);
    CHECK(file.version == "2.8.3+cu128torch2.8cxx11abiFALSE");
    CHECK(file.normalized_version == "2.8.3+cu128torch2.8cxx11abifalse");
    CHECK(file.local_label == "cu128torch2.8cxx11abifalse");
    CHECK(file.python_tag == "cp312");
    CHECK(file.abi_tag == "cp312");
    CHECK(file.platform_tag == "linux_x86_64");
    CHECK_FALSE(file.build_tag.has_value());
    CHECK(file.variant.cuda == std::optional<std::string>("12.8"));
    CHECK(file.variant.torch == std::optional<std::string>("2.8"));
    CHECK(file.variant.cxx11abi == std::optional<bool>(false));
    CHECK(file.sha256 == crypto::sha256_hex(bytes));
    CHECK(file.size == bytes.size());
    CHECK(file.requires_python == std::optional<std::string>(">=3.9"));
    CHECK(file.summary == std::optional<std::string>("Flash Attention: Fast and Memory-Efficient Exact Attention"));
    CHECK(file.metadata_sha256 == crypto::sha256_hex(spec.metadata));
    CHECK(file.metadata_size == spec.metadata.size());
    CHECK(file.uploaded_by == std::optional<std::string>("ci"));
    CHECK(file.mode == catalog::download_mode::local);

    CHECK(read_file(data.store.blob_path(file.sha256)) == bytes);
    CHECK(read_file(data.store.metadata_path(file.sha256)) == spec.metadata);
    CHECK(data.spool_files() == 0);
    auto project = data.db->find_project("flash-attn");
    REQUIRE(project);
    REQUIRE(project->has_value());
    CHECK((*project)->display_name == "flash_attn");
    auto stored = data.db->find_file(file.sha256, flash_attn_filename);
    REQUIRE(stored);
    CHECK(stored->has_value());
}

TEST_CASE("ingester: the build tag and written tag sets are kept as written", "[ingester]") {
    data_dir data;
    wheel_spec spec = flash_attn_spec("2.2.0");
    spec.metadata = "Metadata-Version: 2.1\nName: sageattention\nVersion: 2.2.0\n";
    spec.dist_info = "sageattention-2.2.0.dist-info";
    const std::string filename = "sageattention-2.2.0-280.129-py2.py3-none-any.whl";
    auto ingested = data.ingest(build_wheel(spec), filename);
    REQUIRE(ingested);
    CHECK(ingested->file.build_tag == std::optional<std::string>("280.129"));
    CHECK(ingested->file.python_tag == "py2.py3");
    CHECK(ingested->file.variant.torch == std::optional<std::string>("2.8.0"));
    CHECK(ingested->file.variant.cuda == std::optional<std::string>("12.9"));
}

TEST_CASE("ingester: the same bytes again are identical, other bytes under the name conflict", "[ingester]") {
    data_dir data;
    const auto bytes = build_wheel(flash_attn_spec());
    auto first = data.ingest(bytes, flash_attn_filename);
    REQUIRE(first);
    const auto blob_files = data.blob_files();

    auto again = data.ingest(bytes, flash_attn_filename);
    REQUIRE(again);
    CHECK(again->outcome == ingest_outcome::identical);
    CHECK(again->file.id == first->file.id);
    data.check_untouched(1, blob_files);

    auto spec = flash_attn_spec();
    spec.files["flash_attn/extra.py"] = "x = 1\n";
    const auto other = build_wheel(spec);
    auto clash = data.ingest(other, flash_attn_filename);
    check_refused(clash, error_kind::conflict,
                  "File already exists with other bytes: give the build a new version or build tag, or delete the old "
                  "file first");
    CHECK_THAT(std::string(detail_of(clash.error())), Catch::Contains(flash_attn_filename + " is in the index with sha256 " +
                                                     crypto::sha256_hex(bytes) + ", and this file's sha256 is " +
                                                     crypto::sha256_hex(other)));
    data.check_untouched(1, blob_files);
    CHECK_FALSE(data.store.has_blob(crypto::sha256_hex(other)));
}

TEST_CASE("ingester: the same bytes under a second filename share one blob", "[ingester]") {
    data_dir data;
    wheel_spec spec;  // demo 1.0, py3-none-any
    const auto bytes = build_wheel(spec);
    REQUIRE(data.ingest(bytes, "demo-1.0-py3-none-any.whl"));
    REQUIRE(data.ingest(bytes, "demo-1.0-py2.py3-none-any.whl"));
    CHECK(data.rows() == 2);
    CHECK(data.blob_files() == 2);  // one blob, one METADATA

    // Deleting one keeps the bytes for the other; deleting both removes them.
    REQUIRE(data.ingester.delete_file("demo-1.0-py3-none-any.whl", "admin"));
    CHECK(data.store.has_blob(crypto::sha256_hex(bytes)));
    auto removed = data.ingester.delete_file("demo-1.0-py2.py3-none-any.whl", "admin");
    REQUIRE(removed);
    CHECK(removed->filename == "demo-1.0-py2.py3-none-any.whl");
    data.check_untouched(0, 0);
    CHECK(data.ingester.delete_file("demo-1.0-py3-none-any.whl", "admin").error().kind == error_kind::not_found);
}

TEST_CASE("ingester: digests sent with the upload must match the bytes", "[ingester]") {
    data_dir data;
    const auto bytes = build_wheel();
    auto digest = [&](crypto::hash_algorithm algorithm) {
        auto hasher = crypto::hasher::create(algorithm);
        hasher->update(bytes);
        return hasher->finish_hex();
    };
    const auto sha256 = digest(crypto::hash_algorithm::sha256);
    const auto blake2 = digest(crypto::hash_algorithm::blake2b_256);
    const auto md5 = digest(crypto::hash_algorithm::md5);
    const auto wrong = crypto::sha256_hex("something else");

    check_refused(data.ingest(bytes, "demo-1.0-py3-none-any.whl", expecting(wrong, std::nullopt, std::nullopt)), error_kind::invalid,
                  "upload the file again: it was damaged or cut short on the way (its sha256_digest does not match) "
                  "(demo-1.0-py3-none-any.whl: the upload's sha256_digest is " + wrong + "; the bytes received hash to " + sha256 + ")");
    check_refused(data.ingest(bytes, "demo-1.0-py3-none-any.whl", expecting(std::nullopt, wrong, std::nullopt)), error_kind::invalid,
                  "blake2_256_digest is " + wrong + "; the bytes received hash to " + blake2);
    check_refused(data.ingest(bytes, "demo-1.0-py3-none-any.whl", expecting(std::nullopt, std::nullopt, "0123456789abcdef0123456789abcdef")),
                  error_kind::invalid, "md5_digest is 0123456789abcdef0123456789abcdef; the bytes received hash to " + md5);
    data.check_untouched();

    // Upper-case hex is the same digest.
    std::string upper = sha256;
    for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    auto accepted = data.ingest(bytes, "demo-1.0-py3-none-any.whl", expecting(upper, blake2, md5));
    REQUIRE(accepted);
    CHECK(accepted->outcome == ingest_outcome::created);
}

TEST_CASE("ingester: every bad input is refused precisely and leaves nothing behind", "[ingester]") {
    data_dir data;
    const auto good = build_wheel();
    auto with_metadata = [](std::string metadata) {
        wheel_spec spec;
        spec.metadata = std::move(metadata);
        return build_wheel(spec);
    };
    wheel_spec other_dist_info;
    other_dist_info.dist_info = "other-1.0.dist-info";
    wheel_spec tampered;
    auto entries = wheel_entries(tampered);
    for (auto& entry : entries) {
        if (entry.name == "demo/__init__.py") entry.data = "VALUE = 2\n";
    }

    struct row {
        std::string bytes;
        std::string filename;
        error_kind kind;
        std::string message;
    };
    const row table[] = {
        {good, "demo-1.0.whl", error_kind::invalid, "the filename is 'demo-1.0.whl')"},
        {good, "../demo-1.0-py3-none-any.whl", error_kind::invalid,
         "wheel filename: path separator '/' at position 3; give a file name, not a path (the filename is "
         "'../demo-1.0-py3-none-any.whl')"},
        {"not a zip", "demo-1.0-py3-none-any.whl", error_kind::invalid, "not a zip archive"},
        {good.substr(0, good.size() / 2), "demo-1.0-py3-none-any.whl", error_kind::invalid, "truncated"},
        {good, "other-1.0-py3-none-any.whl", error_kind::invalid,
         "the wheel's demo-1.0.dist-info directory belongs to project demo, but the filename is for other"},
        {build_wheel(other_dist_info), "demo-1.0-py3-none-any.whl", error_kind::invalid,
         "other-1.0.dist-info directory belongs to project other"},
        {with_metadata("Metadata-Version: 2.1\nName: demo\nVersion: 1.1\n"), "demo-1.0-py3-none-any.whl", error_kind::invalid,
         "METADATA says Version: 1.1, but the filename says 1.0"},
        {with_metadata("Metadata-Version: 2.1\nName: demo\nVersion: 1.0\n"), "demo-1.0+cu128-py3-none-any.whl",
         error_kind::invalid,
         "rebuild with +cu128 in the version, or rename the file to drop it: the local label is in the filename only "
         "(demo-1.0+cu128-py3-none-any.whl: METADATA says Version: 1.0, but the filename says 1.0+cu128; pip "
         "discards such a wheel (\"inconsistent version\"))"},
        {with_metadata("Metadata-Version: 2.1\nName: demo\nVersion: 1.0+cu129\n"), "demo-1.0+cu128-py3-none-any.whl",
         error_kind::invalid, "METADATA says Version: 1.0+cu129, but the filename says 1.0+cu128"},
        {with_metadata("Metadata-Version: 2.1\nName: Demo_Two\nVersion: 1.0\n"), "demo-1.0-py3-none-any.whl",
         error_kind::invalid, "METADATA says Name: Demo_Two, but the filename is for project demo"},
        {with_metadata("Metadata-Version: 2.1\nName: demo\nVersion: one\n"), "demo-1.0-py3-none-any.whl", error_kind::invalid,
         "METADATA says Version: one, which is not a PEP 440 version"},
        {with_metadata("Name: demo\n"), "demo-1.0-py3-none-any.whl", error_kind::invalid, "demo-1.0.dist-info/METADATA: "},
        {build_zip(entries), "demo-1.0-py3-none-any.whl", error_kind::invalid,
         "rebuild the wheel: a file's hash differs from what RECORD says (demo-1.0-py3-none-any.whl: RECORD says "
         "demo/__init__.py has sha256="},
    };
    for (const auto& [bytes, filename, kind, message] : table) {
        CAPTURE(filename, message);
        check_refused(data.ingest(bytes, filename), kind, message);
        data.check_untouched();
    }
}

TEST_CASE("ingester: equivalent spellings of the version are the same version", "[ingester]") {
    data_dir data;
    wheel_spec spec;
    spec.metadata = "Metadata-Version: 2.1\nName: demo\nVersion: 1.0.0-RC1\n";
    auto ingested = data.ingest(build_wheel(spec), "demo-1.0.0rc1-py3-none-any.whl");
    REQUIRE(ingested);
    CHECK(ingested->file.normalized_version == "1.0.0rc1");
}

TEST_CASE("ingester: size limits give too_large and leave nothing behind", "[ingester]") {
    data_dir data;
    ingest::ingest_options tiny;
    tiny.max_file_size = 100;
    check_refused(data.ingest(build_wheel(), "demo-1.0-py3-none-any.whl", tiny), error_kind::too_large,
                  "the file is larger than the limit of 100 bytes");
    ingest::ingest_options small;
    small.limits.max_total_uncompressed = 1000;
    check_refused(data.ingest(build_wheel(), "demo-1.0-py3-none-any.whl", small), error_kind::too_large, "past the limit");
    data.check_untouched();
}

TEST_CASE("ingester: a user's file is copied, never moved", "[ingester]") {
    data_dir data;
    temp_dir outside;
    const auto path = outside / "demo-1.0-py3-none-any.whl";
    const auto bytes = build_wheel();
    write_file(path, bytes);
    auto ingested = data.ingester.ingest_file(path, uploaded_by("cli"));
    REQUIRE(ingested);
    CHECK(ingested->file.filename == "demo-1.0-py3-none-any.whl");
    CHECK(ingested->file.uploaded_by == std::optional<std::string>("cli"));
    CHECK(read_file(path) == bytes);
    CHECK(data.spool_files() == 0);

    // A taken name is settled in place: identical for the same bytes, conflict for others.
    auto again = data.ingester.ingest_file(path, uploaded_by("cli"));
    REQUIRE(again);
    CHECK(again->outcome == ingest_outcome::identical);
    wheel_spec changed;
    changed.files["demo/more.py"] = "y = 2\n";
    write_file(path, build_wheel(changed));
    auto clash = data.ingester.ingest_file(path, uploaded_by("cli"));
    check_refused(clash, error_kind::conflict, "File already exists with other bytes");
    CHECK_THAT(std::string(detail_of(clash.error())), Catch::StartsWith("demo-1.0-py3-none-any.whl is in the index with sha256 "));
    data.check_untouched(1, 2);
    CHECK(read_file(data.store.blob_path(crypto::sha256_hex(bytes))) == bytes);

    auto missing = data.ingester.ingest_file(outside / "nope-1.0-py3-none-any.whl", {});
    REQUIRE_FALSE(missing);
    CHECK_THAT(missing.error().message, Catch::Contains("not a regular file"));
}

TEST_CASE("ingester: concurrent ingests of one filename end with one row and one blob", "[ingester]") {
    data_dir data;
    constexpr int threads = 6;
    SECTION("the same bytes: one created, the rest identical") {
        const auto bytes = build_wheel();
        std::vector<storage::spool_file> spools;  // made here: Catch's assertions are for the main thread only
        for (int i = 0; i < threads; ++i) spools.push_back(data.spool(bytes));
        std::atomic<int> created{0}, identical{0}, failed{0};
        std::vector<std::thread> pool;
        for (int i = 0; i < threads; ++i) {
            pool.emplace_back([&, i] {
                auto ingested = data.ingester.ingest_spool(std::move(spools[static_cast<std::size_t>(i)]),
                                                           "demo-1.0-py3-none-any.whl", {});
                if (!ingested) ++failed;
                else if (ingested->outcome == ingest_outcome::created) ++created;
                else ++identical;
            });
        }
        for (auto& thread : pool) thread.join();
        CHECK(failed == 0);
        CHECK(created == 1);
        CHECK(identical == threads - 1);
        data.check_untouched(1, 2);
    }
    SECTION("different bytes: one created, the rest conflict, and only the winner's blob stays") {
        std::vector<std::string> wheels;
        for (int i = 0; i < threads; ++i) {
            wheel_spec spec;
            spec.files["demo/build.txt"] = "build " + std::to_string(i);
            wheels.push_back(build_wheel(spec));
        }
        std::vector<storage::spool_file> spools;
        for (const auto& wheel : wheels) spools.push_back(data.spool(wheel));
        std::atomic<int> created{0}, conflicts{0}, failed{0};
        std::vector<std::thread> pool;
        for (int i = 0; i < threads; ++i) {
            pool.emplace_back([&, i] {
                auto ingested = data.ingester.ingest_spool(std::move(spools[static_cast<std::size_t>(i)]),
                                                           "demo-1.0-py3-none-any.whl", {});
                if (ingested) ++created;
                else if (ingested.error().kind == error_kind::conflict) ++conflicts;
                else ++failed;
            });
        }
        for (auto& thread : pool) thread.join();
        CHECK(failed == 0);
        CHECK(created == 1);
        CHECK(conflicts == threads - 1);
        data.check_untouched(1, 2);
        const auto winner = (**data.db->find_file("demo-1.0-py3-none-any.whl")).sha256;
        CHECK(data.store.has_blob(winner));
    }
}

TEST_CASE("ingester: recover sweeps spool files left by a crash", "[ingester]") {
    data_dir data;
    write_file(data.dir / "tmp" / "spool-999999999-0badc0de", "partial upload");
    auto report = data.ingester.recover();
    REQUIRE(report);
    CHECK(report->removed == 1);
    CHECK(data.spool_files() == 0);
}

TEST_CASE("ingester: recover removes blobs a dead process put in place but never listed, and only those",
          "[ingester]") {
    data_dir data;
    auto listed = data.ingest(build_wheel(flash_attn_spec()), flash_attn_filename);
    REQUIRE(listed);
    // A process killed after its commit, before dropping its claim: the blob has its row.
    (void)data.store.claim_blob(listed->file.sha256)->release();
    // A process killed between putting a wheel in place and committing its row: its spool and
    // claim stay, their locks gone with it.
    const auto orphan_bytes = build_wheel(flash_attn_spec("2.8.4"));
    const auto orphan = crypto::sha256_hex(orphan_bytes);
    auto spool = data.spool(orphan_bytes);
    auto claim = data.store.claim_blob(orphan);
    REQUIRE(claim);
    REQUIRE(data.store.put_blob(orphan, spool.path(), storage::durability::at_sync));
    REQUIRE(data.store.put_metadata(orphan, "Name: flash_attn\n", storage::durability::at_sync));
    (void)spool.release();
    (void)claim->release();
    REQUIRE(data.store.has_blob(orphan));

    auto report = data.ingester.recover();
    REQUIRE(report);
    CHECK(report->blobs_released == 1);
    CHECK(report->removed == 3);
    CHECK_FALSE(data.store.has_blob(orphan));
    CHECK_FALSE(data.store.has_metadata(orphan));
    CHECK(data.store.has_blob(listed->file.sha256));
    CHECK(data.store.has_metadata(listed->file.sha256));
    data.check_untouched(1, 2);
}

TEST_CASE("ingester: the outcome is told after the commit, once, with nothing of the upload left in tmp/",
          "[ingester]") {
    data_dir data;
    std::promise<std::pair<result<ingest::ingest_result>, std::size_t>> told;
    int calls = 0;
    ingest::ingest_options options = uploaded_by("ci");
    bool in_commit = false;
    options.in_same_commit = [&](sqlite::connection& writer) -> result<void> {
        in_commit = writer.in_transaction();
        return {};
    };
    data.ingester.ingest_spool(data.spool(build_wheel(flash_attn_spec())), flash_attn_filename, options,
                               [&](result<ingest::ingest_result> outcome) {
                                   ++calls;
                                   told.set_value({std::move(outcome), data.spool_files()});
                               });
    auto [outcome, spool_files_then] = told.get_future().get();
    REQUIRE(outcome);
    CHECK(outcome->outcome == ingest_outcome::created);
    CHECK(spool_files_then == 0);  // neither the spool nor the claim
    CHECK(in_commit);
    CHECK(data.rows() == 1);  // readable by another connection: committed
    data.ingester.finish_commits();
    CHECK(calls == 1);
}

TEST_CASE("ingester: an sdist becomes a row without tags or variant, beside its project's wheels", "[ingester][sdist]") {
    data_dir data;
    const auto wheel = data.ingest(build_wheel(flash_attn_spec()), flash_attn_filename);
    REQUIRE(wheel);
    const auto bytes = build_sdist("flash_attn-2.8.3",
                                   pkg_info("flash_attn", "2.8.3", "2.1", "Requires-Python: >=3.9\n"));
    auto ingested = data.ingest(bytes, "flash_attn-2.8.3.tar.gz");
    REQUIRE(ingested);
    CHECK(ingested->outcome == ingest_outcome::created);
    const auto& file = ingested->file;
    CHECK(file.type == catalog::package_type::sdist);
    CHECK(file.project == "flash-attn");
    CHECK(file.normalized_version == "2.8.3");
    CHECK(file.python_tag.empty());
    CHECK(file.abi_tag.empty());
    CHECK(file.platform_tag.empty());
    CHECK(file.variant.empty());
    CHECK(file.requires_python == ">=3.9");
    CHECK(file.sha256 == crypto::sha256_hex(bytes));
    // Metadata-Version 2.1 promises nothing about the wheels built from it: no core metadata.
    CHECK(file.metadata_sha256.empty());
    CHECK_FALSE(data.store.has_metadata(file.sha256));
    CHECK(data.store.has_blob(file.sha256));

    auto again = data.ingest(bytes, "flash_attn-2.8.3.tar.gz");
    REQUIRE(again);
    CHECK(again->outcome == ingest_outcome::identical);
    auto stored = data.db->find_file("flash_attn-2.8.3.tar.gz");
    REQUIRE(stored);
    REQUIRE(*stored);
    CHECK((*stored)->type == catalog::package_type::sdist);
    auto wheel_row = data.db->find_file(flash_attn_filename);
    REQUIRE(wheel_row);
    CHECK((**wheel_row).type == catalog::package_type::wheel);
    check_refused(data.ingest(build_sdist("flash_attn-2.8.3", pkg_info("flash_attn", "2.8.3", "2.1", "Summary2: x\n")),
                              "flash_attn-2.8.3.tar.gz"),
                  error_kind::conflict, "File already exists");
}

TEST_CASE("ingester: a static PKG-INFO (2.2, no Dynamic) is kept as the sdist's core metadata", "[ingester][sdist]") {
    data_dir data;
    const auto text = pkg_info("demo", "1.0", "2.2");
    auto ingested = data.ingest(build_sdist("demo-1.0", text), "demo-1.0.tar.gz");
    REQUIRE(ingested);
    CHECK(ingested->file.metadata_sha256 == crypto::sha256_hex(text));
    CHECK(ingested->file.metadata_size == text.size());
    CHECK(read_file(data.store.metadata_path(ingested->file.sha256)) == text);
}

TEST_CASE("ingester: bad sdists are refused with the reason, and nothing is stored", "[ingester][sdist]") {
    data_dir data;
    const auto good = build_sdist("demo-1.0", pkg_info("demo", "1.0"));
    check_refused(data.ingest(good, "Demo-1.0.tar.gz"), error_kind::invalid, "rename it to demo-1.0.tar.gz");
    check_refused(data.ingest(good, "demo-1.0.zip"), error_kind::invalid, "rebuild it as a .tar.gz");
    check_refused(data.ingest(build_sdist("demo-1.0", pkg_info("other", "1.0")), "demo-1.0.tar.gz"), error_kind::invalid,
                  "PKG-INFO says Name: other, Version: 1.0; the filename says demo 1.0");
    check_refused(data.ingest(build_tar(sdist_members("demo-1.0", pkg_info("demo", "1.0"))), "demo-1.0.tar.gz"),
                  error_kind::invalid, "not gzip-compressed");
    auto members = sdist_members("demo-1.0", pkg_info("demo", "1.0"));
    members.push_back({"demo-1.0/../../evil.py", "x", '0', ""});
    check_refused(data.ingest(gzip(build_tar(members)), "demo-1.0.tar.gz"), error_kind::invalid,
                  "rebuild the sdist: a member would be written outside its directory (demo-1.0.tar.gz: member "
                  "'demo-1.0/../../evil.py' contains '..')");
    check_refused(data.ingest(good, "demo-1.0.txt"), error_kind::invalid, "must end in '.whl' (an sdist's in '.tar.gz')");
    data.check_untouched();
}

namespace {

// A put while the spool arrived, into a store that refuses its completion without being asked
// (bucket_blobs while it rests after a failure): its pieces are still up there until abandoned.
class refused_growing_put final : public storage::growing_put {
public:
    explicit refused_growing_put(std::atomic<int>& abandoned) : abandoned_(abandoned) {}
    void part_hashed(std::string) noexcept override {}
    void grew_to(std::uint64_t) noexcept override {}
    void ended() noexcept override {}
    result<void> finish() override { return make_error(error_kind::unavailable, "try again shortly: resting"); }
    storage::leftovers left() const noexcept override { return storage::leftovers::pieces; }
    void abandon(std::function<void(storage::leftovers)> settled) noexcept override {
        ++abandoned_;
        if (settled) settled(storage::leftovers::none);  // its pieces thrown away
    }

private:
    std::atomic<int>& abandoned_;
};

}  // namespace

TEST_CASE("ingester: a put the store refused to complete is abandoned with its claim", "[ingester]") {
    data_dir data;
    const auto wheel = build_wheel(flash_attn_spec());
    const auto sha256 = crypto::sha256_hex(wheel);
    std::atomic<int> abandoned{0};
    auto claim = data.store.claim_blob(sha256);
    REQUIRE(claim);
    ingest::ingest_options options = uploaded_by("ci");
    options.early_blob = std::make_shared<storage::early_blob>(std::move(*claim),
                                                               std::make_unique<refused_growing_put>(abandoned));
    auto refused = data.ingest(wheel, flash_attn_filename, options);
    REQUIRE_FALSE(refused);
    CHECK(refused.error().kind == error_kind::unavailable);
    CHECK(abandoned == 1);       // its pieces are thrown away now, not at the next start
    data.check_untouched();      // and the claim went with them: tmp/ is empty
}
