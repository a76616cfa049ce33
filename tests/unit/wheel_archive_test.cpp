#include <catch2/catch.hpp>

#include "test_support.hpp"
#include "wheelhouse/ingest/wheel_archive.hpp"
#include "zip_builder.hpp"

using namespace wheelhouse;
using namespace wheelhouse::testing;

namespace {

struct archive_file {
    temp_dir dir;
    std::filesystem::path path = dir / "demo-1.0-py3-none-any.whl";
    explicit archive_file(std::string_view bytes) { write_file(path, bytes); }
};

result<ingest::wheel_archive> read_bytes(std::string_view bytes, const ingest::archive_limits& limits = {}) {
    archive_file file(bytes);
    return ingest::read_wheel_archive(file.path, limits);
}

void check_refused(const result<ingest::wheel_archive>& read, error_kind kind, const std::string& message) {
    REQUIRE_FALSE(read);
    CHECK(read.error().kind == kind);
    CHECK_THAT(read.error().message, Catch::Contains(message));
}

// A wheel_spec's entries with one entry replaced, or dropped when `data` is nullopt.
std::vector<zip_entry> with_entry(std::vector<zip_entry> entries, const std::string& name, std::optional<std::string> data) {
    std::erase_if(entries, [&](const zip_entry& entry) { return entry.name == name; });
    if (data) entries.push_back({name, *data});
    return entries;
}

}  // namespace

TEST_CASE("wheel_archive: a well-formed wheel passes and yields METADATA byte for byte", "[wheel_archive]") {
    wheel_spec spec;
    spec.metadata = "Metadata-Version: 2.1\r\nName: demo\r\nVersion: 1.0\r\n\r\n\xc3\xa9t\xc3\xa9\n";
    auto entries = wheel_entries(spec);
    entries.insert(entries.begin(), {"demo/", ""});  // directory entries are allowed and unlisted
    auto read = read_bytes(build_zip(entries));
    REQUIRE(read);
    CHECK(read->dist_info == "demo-1.0.dist-info");
    CHECK(read->metadata == spec.metadata);
    CHECK_THAT(read->wheel, Catch::StartsWith("Wheel-Version: 1.0"));
    CHECK(read->entry_count == 6);
    CHECK(read->uncompressed_size == 10 + 5000 + spec.metadata.size() + spec.wheel.size() +
                                         entries.back().data.size());
}

TEST_CASE("wheel_archive: stored (uncompressed) entries and signature files are fine", "[wheel_archive]") {
    wheel_spec spec;
    auto entries = wheel_entries(spec);
    for (auto& entry : entries) entry.stored = true;
    entries.push_back({"demo-1.0.dist-info/RECORD.jws", "{\"signature\": 1}"});
    CHECK(read_bytes(build_zip(entries)));
}

TEST_CASE("wheel_archive: files that are not zips, or truncated ones, are refused", "[wheel_archive]") {
    check_refused(read_bytes("this is not a zip file at all"), error_kind::invalid, "not a zip archive");
    check_refused(read_bytes(""), error_kind::invalid, "not a zip archive");
    const auto whole = build_wheel();
    check_refused(read_bytes(whole.substr(0, whole.size() / 2)), error_kind::invalid, "was the file truncated?");
    check_refused(read_bytes(whole.substr(0, whole.size() - 10)), error_kind::invalid, "");
}

TEST_CASE("wheel_archive: a zip whose data is damaged is refused", "[wheel_archive]") {
    wheel_spec spec;
    spec.files = {{"demo/data.txt", std::string(4000, 'x') + "END-OF-DATA"}};
    auto entries = wheel_entries(spec);
    for (auto& entry : entries) entry.stored = true;
    // Stored bytes appear verbatim in the file: flip one of them and the CRC no longer matches.
    auto bytes = replace_bytes(build_zip(entries), "END-OF-DATA", "END-OF-DATB");
    check_refused(read_bytes(bytes), error_kind::invalid, "entry demo/data.txt is corrupt");
}

TEST_CASE("wheel_archive: the dist-info directory must be there exactly once", "[wheel_archive]") {
    check_refused(read_bytes(build_zip({{"demo/__init__.py", ""}})), error_kind::invalid,
                  "the wheel has no top-level *.dist-info directory");
    auto entries = wheel_entries({});
    entries.push_back({"other-2.0.dist-info/METADATA", "Name: other"});
    check_refused(read_bytes(build_zip(entries)), error_kind::invalid,
                  "the wheel has 2 .dist-info directories (demo-1.0.dist-info, other-2.0.dist-info); it must have exactly one");
    // A nested one (a vendored package's) does not count.
    auto nested = wheel_entries({.files = {{"demo/_vendor/dep-1.0.dist-info/METADATA", "Name: dep"}}});
    CHECK(read_bytes(build_zip(nested)));
}

TEST_CASE("wheel_archive: METADATA, WHEEL and RECORD are required", "[wheel_archive]") {
    for (const char* file : {"METADATA", "WHEEL", "RECORD"}) {
        CAPTURE(file);
        wheel_spec spec;
        auto entries = with_entry(wheel_entries(spec), "demo-1.0.dist-info/" + std::string(file), std::nullopt);
        if (std::string(file) != "RECORD") {
            // Keep RECORD honest about the rest, so the missing file is the only fault.
            std::string record;
            for (const auto& entry : entries) {
                if (entry.name.ends_with("/RECORD")) continue;
                record += entry.name + "," + record_hash(entry.data) + "," + std::to_string(entry.data.size()) + "\n";
            }
            entries = with_entry(entries, "demo-1.0.dist-info/RECORD", record);
        }
        check_refused(read_bytes(build_zip(entries)), error_kind::invalid,
                      "demo-1.0.dist-info/" + std::string(file) + " is missing");
    }
}

TEST_CASE("wheel_archive: WHEEL must declare version 1.x", "[wheel_archive]") {
    CHECK(ingest::check_wheel_metadata("Wheel-Version: 1.0\nGenerator: bdist_wheel (0.41.2)\n"));
    CHECK(ingest::check_wheel_metadata("Generator: x\r\nWheel-Version:  1.9 \r\n"));
    const std::pair<const char*, const char*> table[] = {
        {"Wheel-Version: 2.0\n", "WHEEL says Wheel-Version: 2.0; only version 1.x"},
        {"Wheel-Version: one\n", "WHEEL says Wheel-Version: one; expected a version such as 1.0"},
        {"Wheel-Version: 1\n", "WHEEL says Wheel-Version: 1; expected"},
        {"Generator: x\n", "WHEEL has no Wheel-Version header"},
        {"Generator: x\n\nWheel-Version: 1.0\n", "WHEEL has no Wheel-Version header"},  // in the body, not a header
        {"", "WHEEL has no Wheel-Version header"},
    };
    for (const auto& [text, message] : table) {
        CAPTURE(text);
        auto checked = ingest::check_wheel_metadata(text);
        REQUIRE_FALSE(checked);
        CHECK_THAT(checked.error().message, Catch::Contains(message));
    }
    wheel_spec spec;
    spec.wheel = "Wheel-Version: 2.0\n";
    check_refused(read_bytes(build_wheel(spec)), error_kind::invalid, "Wheel-Version: 2.0");
}

TEST_CASE("wheel_archive: RECORD must hold the true hash and size of every entry", "[wheel_archive]") {
    const auto entries = wheel_entries({});
    const auto& record = std::find_if(entries.begin(), entries.end(), [](auto& e) { return e.name.ends_with("/RECORD"); })->data;

    SECTION("hash mismatch") {
        auto tampered = with_entry(entries, "demo/_native.so", std::string(5000, '\x7e'));
        check_refused(read_bytes(build_zip(tampered)), error_kind::invalid,
                      "RECORD says demo/_native.so has sha256=" + record_hash(std::string(5000, '\x7f')).substr(7) +
                          " but the archive entry hashes to sha256=" + record_hash(std::string(5000, '\x7e')).substr(7));
    }
    SECTION("size mismatch") {
        auto changed = replace_bytes(record, "demo/__init__.py," + record_hash("VALUE = 1\n") + ",10",
                                     "demo/__init__.py," + record_hash("VALUE = 1\n") + ",11");
        check_refused(read_bytes(build_zip(with_entry(entries, "demo-1.0.dist-info/RECORD", changed))), error_kind::invalid,
                      "RECORD says demo/__init__.py is 11 bytes but the archive entry is 10 bytes");
    }
    SECTION("an entry missing from RECORD") {
        auto extra = entries;
        extra.push_back({"demo/unlisted.py", "x = 2\n"});
        check_refused(read_bytes(build_zip(extra)), error_kind::invalid,
                      "archive entry demo/unlisted.py is not listed in RECORD");
    }
    SECTION("a RECORD row without an entry") {
        auto changed = record + "demo/ghost.py," + record_hash("") + ",0\n";
        check_refused(read_bytes(build_zip(with_entry(entries, "demo-1.0.dist-info/RECORD", changed))), error_kind::invalid,
                      "RECORD lists demo/ghost.py but the archive has no such file");
    }
    SECTION("a row without a hash") {
        REQUIRE(record.starts_with("demo/__init__.py,"));
        auto changed = "demo/__init__.py,,10\n" + record.substr(record.find('\n') + 1);
        check_refused(read_bytes(build_zip(with_entry(entries, "demo-1.0.dist-info/RECORD", changed))), error_kind::invalid,
                      "RECORD lists demo/__init__.py without a hash");
    }
    SECTION("a weak algorithm") {
        auto changed = "demo/__init__.py,md5=abc,10\n" + record;
        check_refused(read_bytes(build_zip(with_entry(entries, "demo-1.0.dist-info/RECORD", changed))), error_kind::invalid,
                      "demo/__init__.py is hashed with md5");
    }
}

TEST_CASE("wheel_archive: entry names that would escape or confuse an installer are refused", "[wheel_archive]") {
    const std::pair<const char*, const char*> table[] = {
        {"../evil.py", "entry \"../evil.py\" contains '..'"},
        {"demo/../../evil.py", "entry \"demo/../../evil.py\" contains '..'"},
        {"/etc/cron.d/evil", "entry \"/etc/cron.d/evil\" has an absolute path"},
        {"C:/evil.py", "starts with a drive letter"},
        {"demo\\..\\evil.py", "contains a backslash"},
        {"demo//evil.py", "has an empty or '.' path component"},
        {"./demo/evil.py", "has an empty or '.' path component"},
    };
    for (const auto& [name, message] : table) {
        CAPTURE(name);
        auto named = ingest::check_entry_name(name);
        REQUIRE_FALSE(named);
        CHECK_THAT(named.error().message, Catch::Contains(message));
        auto entries = wheel_entries({});
        entries.push_back({name, "boom"});
        check_refused(read_bytes(build_zip(entries)), error_kind::invalid, message);
    }
    for (const char* fine : {"demo/__init__.py", "demo/", "demo-1.0.data/scripts/run", "a..b/c..d.py", "demo/a:b.py", "1:x"}) {
        CAPTURE(fine);
        CHECK(ingest::check_entry_name(fine));
    }
}

TEST_CASE("wheel_archive: duplicate entries are refused", "[wheel_archive]") {
    wheel_spec spec;
    spec.files = {{"demo/dup_a.py", "a = 1\n"}, {"demo/dup_b.py", "b = 2\n"}};
    // Rename the second entry to the first's name in both zip headers (RECORD is deflated, so
    // its text is not touched and the archive stays otherwise consistent).
    auto bytes = replace_bytes(build_wheel(spec), "demo/dup_b.py", "demo/dup_a.py");
    check_refused(read_bytes(bytes), error_kind::invalid, "entry demo/dup_a.py appears twice in the archive");
}

TEST_CASE("wheel_archive: zip bombs are refused, by declared and by actual size", "[wheel_archive]") {
    ingest::archive_limits limits;
    limits.max_total_uncompressed = 1 << 20;
    limits.max_entry_uncompressed = 1 << 20;

    SECTION("an entry declaring more than the limit") {
        wheel_spec spec;
        spec.files = {{"demo/big.bin", std::string(1000, 'a')}};
        auto bytes = declare_size(build_wheel(spec), "demo/big.bin", 0xfffffff0u);
        check_refused(read_bytes(bytes, limits), error_kind::too_large, "entry demo/big.bin declares 4294967280 bytes");
    }
    SECTION("entries that together declare more than the limit") {
        wheel_spec spec;
        spec.files = {{"demo/a.bin", std::string(600'000, 'a')}, {"demo/b.bin", std::string(600'000, 'b')}};
        check_refused(read_bytes(build_wheel(spec), limits), error_kind::too_large,
                      "the archive declares more than 1048576 bytes uncompressed");
    }
    SECTION("a small entry that inflates past what it declares") {
        wheel_spec spec;
        spec.files = {{"demo/zeros.bin", std::string(4 << 20, '\0')}};
        // 4 MiB of zeros deflate to a few KiB; the headers now claim 1000 bytes.
        auto bytes = declare_size(build_wheel(spec), "demo/zeros.bin", 1000);
        CHECK(bytes.size() < 64 * 1024);
        check_refused(read_bytes(bytes, limits), error_kind::invalid,
                      "entry demo/zeros.bin inflates past its declared size of 1000 bytes: refusing a possible zip bomb");
    }
    SECTION("an entry compressed beyond any real file") {
        wheel_spec spec;
        spec.files = {{"demo/zeros.bin", std::string(4 << 20, '\0')}};
        check_refused(read_bytes(build_wheel(spec)), error_kind::invalid,
                      "entry demo/zeros.bin would inflate from");
    }
    SECTION("too many entries") {
        ingest::archive_limits few;
        few.max_entries = 3;
        check_refused(read_bytes(build_wheel(), few), error_kind::too_large, "the archive has 5 entries, past the limit of 3");
    }
}

TEST_CASE("wheel_archive: an oversized METADATA is refused before it is read", "[wheel_archive]") {
    ingest::archive_limits limits;
    limits.max_metadata_size = 100;
    wheel_spec spec;
    spec.metadata += std::string(200, 'x');
    check_refused(read_bytes(build_wheel(spec), limits), error_kind::too_large,
                  "demo-1.0.dist-info/RECORD is");  // RECORD is read first and is already past 100 bytes
}

TEST_CASE("wheel_archive: a variant.json past PEP 825's byte limit is measured, not read", "[wheel_archive][pep825]") {
    wheel_spec spec;
    spec.files["demo-1.0.dist-info/variant.json"] = std::string(70 * 1024, ' ');
    auto read = read_bytes(build_wheel(spec));
    if (!read) FAIL(read.error().message);
    CHECK(read->variant_json_size == 70u * 1024);
    CHECK_FALSE(read->variant_json.has_value());
    spec.files["demo-1.0.dist-info/variant.json"] = "{}";
    read = read_bytes(build_wheel(spec));
    REQUIRE(read);
    CHECK(read->variant_json_size == 2u);
    CHECK(read->variant_json == "{}");
}
