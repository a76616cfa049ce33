#include <catch2/catch.hpp>

#include <span>

#include "tar_builder.hpp"
#include "test_support.hpp"
#include "wheelhouse/error_text.hpp"
#include "wheelhouse/ingest/sdist_archive.hpp"
#include "wheelhouse/ingest/sdist_validation.hpp"

using namespace wheelhouse;
using namespace wheelhouse::testing;

namespace {

result<ingest::sdist_archive> read(std::string_view bytes, const ingest::archive_limits& limits = {}) {
    return ingest::read_sdist_archive(
        std::span(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size()), limits);
}

void check_refused(const result<ingest::sdist_archive>& read, error_kind kind, const std::string& message) {
    REQUIRE_FALSE(read);
    CHECK(read.error().kind == kind);
    CHECK_THAT(read.error().message, Catch::Contains(message));
    CHECK(reason_of(read.error()).size() <= reason_budget);
}

const std::string root = "demo-1.0";
const std::string info = pkg_info("demo", "1.0");

std::string with(std::vector<tar_member> extra) {
    auto members = sdist_members(root, info);
    members.insert(members.end(), extra.begin(), extra.end());
    return gzip(build_tar(members));
}

}  // namespace

TEST_CASE("sdist_archive: a well-formed sdist yields its root and PKG-INFO byte for byte", "[sdist_archive]") {
    auto archive = read(build_sdist(root, info));
    REQUIRE(archive);
    CHECK(archive->root == "demo-1.0");
    CHECK(archive->pkg_info == info);
    CHECK(archive->entry_count == 5);
    CHECK(archive->uncompressed_size == build_tar(sdist_members(root, info)).size());
}

TEST_CASE("sdist_archive: the file on disk reads as the same bytes in memory", "[sdist_archive]") {
    temp_dir dir;
    write_file(dir / "demo-1.0.tar.gz", build_sdist(root, info));
    auto archive = ingest::read_sdist_archive(dir / "demo-1.0.tar.gz");
    REQUIRE(archive);
    CHECK(archive->pkg_info == info);
}

TEST_CASE("sdist_archive: pax and GNU long names are followed, and links inside the root are fine", "[sdist_archive]") {
    const std::string long_name = root + "/" + std::string(150, 'd') + "/file.py";
    const std::string record = "path=" + long_name + "\n";
    const std::string pax = std::to_string(record.size() + 4) + " " + record;  // the length counts itself
    REQUIRE(pax.starts_with(std::to_string(pax.size()) + " "));
    auto archive = read(with({{"././@PaxHeader", pax, 'x', ""},
                              {"short", "x = 1\n", '0', ""},
                              {"././@LongLink", root + "/" + std::string(120, 'g') + ".py", 'L', ""},
                              {"short2", "y = 2\n", '0', ""},
                              {root + "/src/alias.py", "", '2', "demo.py"},
                              {root + "/up.py", "", '2', "src/../setup.py"},
                              {root + "/copy.py", "", '1', root + "/setup.py"}}));
    REQUIRE(archive);
    CHECK(archive->entry_count == 10);
}

TEST_CASE("sdist_archive: paths that leave the root are refused", "[sdist_archive]") {
    check_refused(read(with({{root + "/../evil.py", "x", '0', ""}})), error_kind::invalid, "contains '..'");
    check_refused(read(with({{"/etc/evil", "x", '0', ""}})), error_kind::invalid, "absolute path");
    check_refused(read(with({{root + "/a\\b.py", "x", '0', ""}})), error_kind::invalid, "backslash");
    check_refused(read(with({{root + "/evil", "", '2', "../../etc/passwd"}})), error_kind::invalid, "points outside");
    check_refused(read(with({{root + "/evil", "", '2', "/etc/passwd"}})), error_kind::invalid, "is absolute");
    check_refused(read(with({{root + "/src/evil", "", '2', "../.."}})), error_kind::invalid, "points outside");
    check_refused(read(with({{root + "/evil", "", '1', "etc/passwd"}})), error_kind::invalid, "names no member");
    check_refused(read(with({{root + "/evil", "", '1', root + "/later.py"}})), error_kind::invalid, "names no member");
    check_refused(read(with({{root + "/evil", "", '1', "../x"}})), error_kind::invalid, "outside its directory");
}

TEST_CASE("sdist_archive: exactly one top-level directory with PKG-INFO in it", "[sdist_archive]") {
    check_refused(read(with({{"other-1.0/x.py", "x", '0', ""}})), error_kind::invalid, "exactly one top-level");
    check_refused(read(with({{"setup.cfg", "x", '0', ""}})), error_kind::invalid, "lies at the top level");
    auto members = sdist_members(root, info);
    members.erase(members.begin() + 1);
    check_refused(read(gzip(build_tar(members))), error_kind::invalid, "it has no PKG-INFO");
    check_refused(read(with({{root + "/setup.py", "again", '0', ""}})), error_kind::invalid, "appears twice");
    check_refused(read(gzip(build_tar({}))), error_kind::invalid, "empty");
    members = sdist_members(root, info);
    members[1] = {root + "/PKG-INFO", "", '2', "setup.py"};
    check_refused(read(gzip(build_tar(members))), error_kind::invalid, "PKG-INFO must be a regular file");
}

TEST_CASE("sdist_archive: devices, FIFOs and unknown member types are refused", "[sdist_archive]") {
    check_refused(read(with({{root + "/dev", "", '3', ""}})), error_kind::invalid, "files, directories and links only");
    check_refused(read(with({{root + "/fifo", "", '6', ""}})), error_kind::invalid, "files, directories and links only");
}

TEST_CASE("sdist_archive: damaged, cut or padded archives are refused", "[sdist_archive]") {
    const auto whole = build_sdist(root, info);
    check_refused(read(whole.substr(0, whole.size() / 2)), error_kind::invalid, "cut short");
    check_refused(read(whole.substr(0, whole.size() - 4)), error_kind::invalid, "cut short");
    check_refused(read(build_tar(sdist_members(root, info))), error_kind::invalid, "not gzip-compressed");
    check_refused(read("PK\x03\x04 a zip file"), error_kind::invalid, "not gzip-compressed");
    check_refused(read(whole + "trailing"), error_kind::invalid, "bytes follow the end of its gzip stream");
    check_refused(read(whole + whole), error_kind::invalid, "bytes follow the end of its gzip stream");
    std::string flipped = whole;
    flipped[flipped.size() / 2] = static_cast<char>(flipped[flipped.size() / 2] ^ 0x55);
    CHECK_FALSE(read(flipped));
    check_refused(read(gzip(build_tar(sdist_members(root, info), 0))), error_kind::invalid, "no end-of-archive marker");
    auto tar = build_tar(sdist_members(root, info));
    tar[600] = 'Z';  // inside the second header: its checksum no longer matches
    check_refused(read(gzip(tar)), error_kind::invalid, "checksum is wrong");
    auto padded = build_tar(sdist_members(root, info)) + "hidden";
    check_refused(read(gzip(padded)), error_kind::invalid, "data follows its tar archive's end marker");
    auto short_member = build_tar(sdist_members(root, info));
    short_member.resize(512 * 3 + 10);
    check_refused(read(gzip(short_member)), error_kind::invalid, "cut short");
}

TEST_CASE("sdist_archive: bombs, counts and sizes stop at the limits", "[sdist_archive]") {
    ingest::archive_limits limits;
    limits.ratio_floor = 1 << 16;
    check_refused(read(with({{root + "/zeros.bin", std::string(4 << 20, '\0'), '0', ""}}), limits),
                  error_kind::invalid, "gzip bomb");
    limits = {};
    limits.max_total_uncompressed = 64 << 10;
    check_refused(read(with({{root + "/big.bin", std::string(100 << 10, 'x'), '0', ""}}), limits),
                  error_kind::too_large, "past the limit");
    limits = {};
    limits.max_entry_uncompressed = 1000;
    check_refused(read(with({{root + "/big.bin", std::string(2000, 'x'), '0', ""}}), limits), error_kind::too_large,
                  "per-member limit");
    limits = {};
    limits.max_entries = 4;
    check_refused(read(build_sdist(root, info), limits), error_kind::too_large, "more than 4 members");
    limits = {};
    limits.max_metadata_size = 10;
    check_refused(read(build_sdist(root, info), limits), error_kind::too_large, "PKG-INFO is");
}

TEST_CASE("sdist_archive: PKG-INFO is static metadata only from 2.2 without Dynamic (PEP 643)", "[sdist_archive]") {
    auto parse = [](const std::string& text) {
        auto parsed = metadata::parse_core_metadata(text);
        REQUIRE(parsed);
        return std::move(parsed).value();
    };
    CHECK_FALSE(ingest::has_static_metadata(parse(pkg_info("demo", "1.0", "2.1"))));
    CHECK(ingest::has_static_metadata(parse(pkg_info("demo", "1.0", "2.2"))));
    CHECK(ingest::has_static_metadata(parse(pkg_info("demo", "1.0", "2.4"))));
    CHECK_FALSE(ingest::has_static_metadata(parse(pkg_info("demo", "1.0", "2.2", "Dynamic: Requires-Dist\n"))));
}

TEST_CASE("sdist_validation: the root and PKG-INFO must agree with the filename", "[sdist_archive]") {
    temp_dir dir;
    auto check = [&](const std::string& filename, const std::string& bytes) {
        write_file(dir / filename, bytes);
        auto name = pep625::parse_sdist_filename(filename);
        REQUIRE(name);
        return ingest::validate_sdist(dir / filename, *name);
    };
    CHECK(check("demo-1.0.tar.gz", build_sdist("demo-1.0", pkg_info("Demo", "1.0"))));
    CHECK(check("my_pkg-1.0.tar.gz", build_sdist("my-pkg-1.0", pkg_info("My-Pkg", "1.0"))));  // poetry's root
    auto other = check("demo-1.0.tar.gz", build_sdist("demo-1.0", pkg_info("other", "1.0")));
    REQUIRE_FALSE(other);
    CHECK_THAT(other.error().message, Catch::Contains("PKG-INFO's Name is another project"));
    CHECK_THAT(other.error().message, Catch::Contains("PKG-INFO says Name: other, Version: 1.0; the filename says demo 1.0"));
    auto version = check("demo-1.0.tar.gz", build_sdist("demo-1.0", pkg_info("demo", "1.1")));
    REQUIRE_FALSE(version);
    CHECK_THAT(version.error().message, Catch::Contains("PKG-INFO's Version differs"));
    auto root_dir = check("demo-1.0.tar.gz", build_sdist("demo-2.0", pkg_info("demo", "1.0")));
    REQUIRE_FALSE(root_dir);
    CHECK_THAT(root_dir.error().message, Catch::Contains("top-level directory names another project or version"));
    auto fields = check("demo-1.0.tar.gz", build_sdist("demo-1.0", pkg_info("demo", "1.0", "2.1", "Requires-Python: >=3.x\n")));
    REQUIRE_FALSE(fields);
    CHECK_THAT(fields.error().message, Catch::Contains("Requires-Python"));
}
