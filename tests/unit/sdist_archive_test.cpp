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

result<ingest::sdist_archive> read(std::string_view bytes, const ingest::archive_limits& limits = {},
                                   const ingest::tar_name_limits& names = {}) {
    return ingest::read_sdist_archive(
        std::span(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size()), limits, names);
}

// The members the checks saw, one line each: "symlink demo-1.0/ln -> demo-1.0/setup.py".
std::vector<std::string> members_of(std::string_view bytes) {
    std::vector<std::string> seen;
    auto read = ingest::read_sdist_archive(
        std::span(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size()), {}, {},
        [&](const ingest::sdist_member& member) {
            seen.push_back(std::string(ingest::describe(member.type)) + " " + std::string(member.path) +
                           (member.resolved.empty() ? "" : " -> " + std::string(member.resolved)));
        });
    if (!read) seen.push_back("refused: " + read.error().message);
    return seen;
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
                              gnu_long_name(root + "/" + std::string(120, 'g') + ".py"),
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
    check_refused(read(with({{root + "/evil", "", '2', "/etc/passwd"}})), error_kind::invalid, "absolute path");
    check_refused(read(with({{root + "/src/evil", "", '2', "../.."}})), error_kind::invalid, "points outside");
    check_refused(read(with({{root + "/evil", "", '1', "etc/passwd"}})), error_kind::invalid, "names no member");
    check_refused(read(with({{root + "/evil", "", '1', root + "/later.py"}})), error_kind::invalid, "names no member");
    check_refused(read(with({{root + "/evil", "", '1', "../x"}})), error_kind::invalid, "contains '..'");
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

// What an attacker got past the reader that checked names as text (issue 24): each is read now
// as tarfile and GNU tar read it, and refused.
TEST_CASE("sdist_archive: a link that escapes through an earlier link is refused", "[sdist_archive]") {
    // tarfile.extractall (no filter) writes pwned.txt two levels above the folder.
    check_refused(read(with({{root + "/a/b/up", "", '2', "../.."},
                             {root + "/esc", "", '2', "a/b/up/../.."},
                             {root + "/esc/pwned.txt", "owned", '0', ""}})),
                  error_kind::invalid, "symbolic link 'demo-1.0/esc' -> 'a/b/up/../..' points outside 'demo-1.0/'");
    // Chains inside the root resolve through each link: fine.
    CHECK(members_of(with({{root + "/a/b/up", "", '2', "../.."}, {root + "/via", "", '2', "a/b/up/setup.py"}})) ==
          std::vector<std::string>{"directory demo-1.0", "file demo-1.0/PKG-INFO", "file demo-1.0/setup.py",
                                   "directory demo-1.0/src", "file demo-1.0/src/demo.py",
                                   "symlink demo-1.0/a/b/up -> demo-1.0",
                                   "symlink demo-1.0/via -> demo-1.0/setup.py"});
    // Past a part that does not exist yet, ".." could climb out of whatever a later member makes there.
    check_refused(read(with({{root + "/ln", "", '2', "later/../setup.py"}})), error_kind::invalid,
                  "which nothing before it made");
    check_refused(read(with({{root + "/ln", "", '2', "later"}, {root + "/x", "", '2', "ln/../.."}})), error_kind::invalid,
                  "which nothing before it made");
    // A link to what comes later is fine; so is writing nothing through a link.
    CHECK(read(with({{root + "/ln", "", '2', "docs/index.md"}, {root + "/docs/index.md", "# hi", '0', ""}})));
    check_refused(read(with({{root + "/ln", "", '2', "src"}, {root + "/ln/x.py", "x", '0', ""}})), error_kind::invalid,
                  "without members under a symbolic link");
    check_refused(read(with({{root + "/ln", "", '2', "setup.py/x"}})), error_kind::invalid, "passes through the file");
    check_refused(read(with({{root + "/setup.py/x", "", '0', ""}})), error_kind::invalid, "stored under a file");
    check_refused(read(with({{root + "/up", "", '2', "."}, {root + "/h", "", '1', root + "/up"}})), error_kind::invalid,
                  "names a symbolic link");
    check_refused(read(with({{root + "/h", "", '1', root + "/src"}})), error_kind::invalid, "names no file");
    check_refused(read(with({{"ln", "", '2', "demo-1.0"}})), error_kind::invalid, "lies at the top level");
}

TEST_CASE("sdist_archive: a file named like a directory is refused, whatever data follows it", "[sdist_archive]") {
    // The server once took this for a directory and read its data as headers; tarfile and GNU
    // tar skip the data and unpack root/ln -> /etc/passwd, which it never saw.
    const auto hidden = build_tar({{root + "/ln", "", '2', "/etc/passwd"}}, 0);
    REQUIRE(hidden.size() == 512);
    check_refused(read(with({{root + "/d/", hidden + std::string(512, '\0'), '0', ""}})), error_kind::invalid,
                  "a file's name ends in '/'");
    // The old style ('\0'): tarfile makes a directory of it and reads on into its data.
    check_refused(read(with({{root + "/d/", hidden, '\0', ""}})), error_kind::invalid, "a file's name ends in '/'");
    check_refused(read(with({{root + "/d/", "", '\0', ""}})), error_kind::invalid, "a file's name ends in '/'");
    check_refused(read(with({pax_header({{"path", root + "/d/"}}), {root + "/d", "", '0', ""}})), error_kind::invalid,
                  "a file's name ends in '/'");
    // Links and directories carry no data: GNU tar skips a link's, tarfile reads it as headers.
    check_refused(read(with({{root + "/s", hidden, '2', "setup.py"}})), error_kind::invalid,
                  "a link or directory carries data");
    check_refused(read(with({{root + "/d2/", hidden, '5', ""}})), error_kind::invalid, "a link or directory carries data");
    check_refused(read(with({pax_header({{"size", "512"}}), {root + "/s", "", '2', "setup.py"}})), error_kind::invalid,
                  "a link or directory carries data");
}

TEST_CASE("sdist_archive: the ustar prefix is read under ustar magic and refused under GNU magic", "[sdist_archive]") {
    CHECK(members_of(with({{.name = "x.py", .data = "x", .prefix = root + "/src/deep"}})).back() ==
          "file demo-1.0/src/deep/x.py");
    // tarfile reads bytes 345.. as a prefix under any magic; GNU tar only under ustar's.
    check_refused(read(with({{.name = "x.py", .data = "x", .magic = gnu_magic, .prefix = "../../../../tmp"}})),
                  error_kind::invalid, "a prefix field under GNU magic");
    check_refused(read(with({{.name = "x.py", .data = "x", .prefix = "../../../../tmp"}})), error_kind::invalid,
                  "contains '..'");
    const std::string_view v7_magic("\0\0\0\0\0\0\0\0", 8);
    check_refused(read(with({{.name = root + "/x.py", .data = "x", .magic = v7_magic}})), error_kind::invalid,
                  "no ustar or GNU magic");
}

TEST_CASE("sdist_archive: pax and GNU headers only where tarfile and GNU tar read them alike", "[sdist_archive]") {
    const tar_member file{root + "/plain.py", "x", '0', ""};
    // tarfile takes the first header's name, GNU tar the pax path, or the last of two.
    check_refused(read(with({gnu_long_name(root + "/a.py"), pax_header({{"path", root + "/b.py"}}), file})),
                  error_kind::invalid, "both a GNU long name and a pax path");
    check_refused(read(with({gnu_long_name(root + "/a.py", 'K'), pax_header({{"linkpath", "setup.py"}}),
                             {root + "/ln", "", '2', "x"}})),
                  error_kind::invalid, "both a GNU long link and a pax linkpath");
    check_refused(read(with({gnu_long_name(root + "/a.py"), gnu_long_name(root + "/b.py"), file})), error_kind::invalid,
                  "two GNU long names");
    check_refused(read(with({pax_header({{"path", root + "/a.py"}}), pax_header({{"path", root + "/b.py"}}), file})),
                  error_kind::invalid, "two pax extended headers");
    check_refused(read(with({pax_header({{"path", root + "/a.py"}, {"path", root + "/b.py"}}), file})), error_kind::invalid,
                  "is given twice");
    // Keys that move a member are never global; keys neither reads alike are refused.
    check_refused(read(with({pax_header({{"path", root + "/g.py"}}, 'g'), file})), error_kind::invalid,
                  "global key 'path'");
    CHECK(read(with({pax_header({{"comment", "0123abcd"}}, 'g'), file})));  // git archive writes one
    check_refused(read(with({pax_header({{"GNU.sparse.name", root + "/s.py"}}), file})), error_kind::invalid,
                  "pax key wheelhouse does not read");
    check_refused(read(with({pax_header({{"hdrcharset", "BINARY"}}), file})), error_kind::invalid, "'hdrcharset'");
    check_refused(read(with({pax_header({{"size", "+1"}}), file})), error_kind::invalid, "read differently");
    check_refused(read(with({pax_header({{"path", ""}}), file})), error_kind::invalid, "read differently");
    check_refused(read(with({pax_header({{"path", root + std::string("/a\0b", 4)}}), file})), error_kind::invalid,
                  "read differently");
    // tarfile parses pax records on into the padding; GNU tar stops at the size.
    auto padded = pax_header({{"path", root + "/a.py"}});
    const auto record_size = padded.data.size();
    padded.data += pax_record("path", root + "/b.py");
    padded.edit = [record_size](std::string& header) { std::snprintf(header.data() + 124, 12, "%011zo", record_size); };
    check_refused(read(with({padded, file})), error_kind::invalid, "has data in its padding");
    auto unterminated = gnu_long_name(root + "/a.py");
    unterminated.data.pop_back();
    check_refused(read(with({unterminated, file})), error_kind::invalid, "not one NUL-terminated name");
    // What tools write reads as the name it says.
    CHECK(members_of(with({gnu_long_name(root + "/" + std::string(150, 'l') + ".py"), file})).back() ==
          "file demo-1.0/" + std::string(150, 'l') + ".py");
    CHECK(members_of(with({pax_header({{"path", root + "/p.py"}, {"mtime", "1700000000.25"}, {"uname", "ci"}}), file}))
              .back() == "file demo-1.0/p.py");
}

TEST_CASE("sdist_archive: number fields only where tarfile and GNU tar read them alike", "[sdist_archive]") {
    const auto edited = [](std::function<void(std::string&)> edit) {
        return with({{.name = root + "/x.py", .data = "abc", .edit = std::move(edit)}});
    };
    // GNU tar reads a size after a leading NUL, tarfile reads it as 0.
    check_refused(read(edited([](std::string& h) { std::memcpy(h.data() + 124, "\0" "0000000003\0", 12); })),
                  error_kind::invalid, "size field is malformed");
    check_refused(read(edited([](std::string& h) { std::memset(h.data() + 100, ' ', 8); })), error_kind::invalid,
                  "its mode field");
    check_refused(read(edited([](std::string& h) { std::memcpy(h.data() + 108, "0_7\0\0\0\0\0", 8); })),
                  error_kind::invalid, "its uid field");
    check_refused(read(edited([](std::string& h) { h[124] = '\xff'; })), error_kind::invalid, "size field is malformed");
    // All-NUL fields (GNU tar's device numbers), base-256 sizes and signed checksums read alike.
    CHECK(read(edited([](std::string& h) { std::memset(h.data() + 329, 0, 16); std::memset(h.data() + 100, 0, 8); })));
    CHECK(read(edited([](std::string& h) {
        std::memset(h.data() + 124, 0, 12);
        h[124] = '\x80';
        h[135] = 3;
    })));
    CHECK(read(edited([](std::string& h) {
        h[300] = '\xe9';  // a byte with the high bit set: the signed and unsigned sums differ
        set_checksum(h, true);
    })));
}

TEST_CASE("sdist_archive: a member may not land on an earlier one", "[sdist_archive]") {
    check_refused(read(with({{root + "/src", "", '0', ""}})), error_kind::invalid, "appears twice");
    check_refused(read(with({{root + "/src/demo.py/", "", '5', ""}})), error_kind::invalid, "appears twice");
    check_refused(read(with({{root + "/setup.py", "", '2', "src/demo.py"}})), error_kind::invalid, "appears twice");
    check_refused(read(with({{root + "/src/", "", '5', ""}})), error_kind::invalid, "appears twice");
    check_refused(read(with({{root + "/./setup.py", "", '0', ""}})), error_kind::invalid, "empty or '.' part");
    check_refused(read(with({{root + "//setup.py", "", '0', ""}})), error_kind::invalid, "empty or '.' part");
    // A directory a name implied may be named later; nothing else may.
    CHECK(read(with({{root + "/pkg/mod.py", "x", '0', ""}, {root + "/pkg/", "", '5', ""}})));
    check_refused(read(with({{root + "/pkg/mod.py", "x", '0', ""}, {root + "/pkg", "", '0', ""}})), error_kind::invalid,
                  "appears twice");
}

TEST_CASE("sdist_archive: names are UTF-8 without control characters, and bounded", "[sdist_archive]") {
    check_refused(read(with({{root + "/\xff.py", "x", '0', ""}})), error_kind::invalid, "is not UTF-8");
    check_refused(read(with({{root + "/a\nb.py", "x", '0', ""}})), error_kind::invalid, "control character");
    check_refused(read(with({{root + "/ln", "", '2', "a\tb"}})), error_kind::invalid, "control character");
    check_refused(read(with({{root + "/C:x", "", '2', "C:x"}})), error_kind::invalid, "drive letter");
    CHECK(read(with({{root + "/caf\xc3\xa9.py", "x", '0', ""}})));
    CHECK(read(with({gnu_long_name(root + "/" + std::string(255, 'p')), {"x", "", '0', ""}})));
    check_refused(read(with({gnu_long_name(root + "/" + std::string(256, 'p')), {"x", "", '0', ""}})), error_kind::invalid,
                  "part longer than 255 bytes");
    // A long name past the limit is refused before it is read whole.
    check_refused(read(with({gnu_long_name(root + "/" + std::string(5000, 'n')), {"x", "", '0', ""}})),
                  error_kind::invalid, "a long name is too long");
    check_refused(read(with({pax_header({{"path", root + "/" + std::string(5000, 'n')}}), {"x", "", '0', ""}})),
                  error_kind::invalid, "a path or link is longer than 4096 bytes");
    check_refused(read(with({pax_header({{"comment", std::string(20000, 'c')}}), {"x", "", '0', ""}})),
                  error_kind::invalid, "a pax header is too long");
}

TEST_CASE("sdist_archive: the names kept for a whole archive are bounded", "[sdist_archive]") {
    ingest::tar_name_limits names;
    names.max_kept_bytes = 200;
    std::vector<tar_member> many;
    for (int i = 0; i < 20; ++i) many.push_back({root + "/file" + std::to_string(i) + ".py", "x", '0', ""});
    check_refused(read(with(many), {}, names), error_kind::too_large, "fewer or shorter names");
    names = {};
    names.max_implied_directories = 3;
    check_refused(read(with({{root + "/a/b/c/d/e.py", "x", '0', ""}}), {}, names), error_kind::too_large,
                  "fewer directories");
    // A link's unresolved rest is kept too, and counts.
    names = {};
    names.max_kept_bytes = 80;
    check_refused(read(with({{root + "/ln", "", '2', "later/" + std::string(40, 'r')}}), {}, names), error_kind::too_large,
                  "fewer or shorter names");
}
