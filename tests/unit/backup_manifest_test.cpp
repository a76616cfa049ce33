#include <catch2/catch.hpp>

#include "wheelhouse/backup/manifest.hpp"

using namespace wheelhouse;

namespace {

backup::manifest sample() {
    backup::manifest contents;
    contents.created = "2026-11-22T08:00:00.000000Z";
    contents.schema_version = 2;
    contents.file_rows = 1;
    contents.includes_blobs = true;
    contents.catalog = {"catalog.db", std::string(64, '1'), 4096};
    const std::string digest = "ab12" + std::string(60, '3');
    contents.blobs = {{"blobs/sha256/ab/12/" + digest, digest, 1234},
                      {"blobs/sha256/ab/12/" + digest + ".metadata", std::string(64, '4'), 56}};
    return contents;
}

std::string replaced(std::string text, std::string_view from, std::string_view to) {
    const auto at = text.find(from);
    REQUIRE(at != std::string::npos);
    return text.replace(at, from.size(), to);
}

}  // namespace

TEST_CASE("backup manifest: what is written is read back", "[backup]") {
    const auto contents = sample();
    auto parsed = backup::parse_manifest(backup::to_json(contents));
    REQUIRE(parsed);
    CHECK(parsed->created == contents.created);
    CHECK(parsed->schema_version == 2);
    CHECK(parsed->file_rows == 1);
    CHECK(parsed->includes_blobs);
    CHECK(parsed->catalog.sha256 == contents.catalog.sha256);
    CHECK(parsed->catalog.size == 4096);
    REQUIRE(parsed->blobs.size() == 2);
    CHECK(parsed->blobs[1].path == contents.blobs[1].path);
    CHECK(parsed->blobs[1].size == 56);
}

TEST_CASE("backup manifest: damaged or foreign manifests are refused with the reason", "[backup]") {
    const auto good = backup::to_json(sample());
    const std::string digest = "ab12" + std::string(60, '3');
    struct row {
        std::string name;
        std::string text;
        std::string message;
    };
    const std::vector<row> table = {
        {"cut in half", good.substr(0, good.size() / 2), "not valid JSON"},
        {"empty", "", "not valid JSON"},
        {"an array", "[]", "not a JSON object"},
        {"another format", replaced(good, "wheelhouse-backup", "something-else"), "not a wheelhouse backup"},
        {"a newer format", replaced(good, "\"format_version\":1", "\"format_version\":2"), "format_version 2 is not 1"},
        {"no catalog", replaced(good, "\"catalog\":", "\"catalogue\":"), "no \"catalog\" entry"},
        {"a catalog elsewhere", replaced(good, "\"catalog.db\"", "\"../catalog.db\""), "not \"catalog.db\""},
        {"a short digest", replaced(good, std::string(64, '1'), "111"), "64 lower-case hex digits"},
        {"a negative size", replaced(good, "\"size\":4096", "\"size\":-1"), "non-negative \"size\""},
        {"a path outside the store", replaced(good, "blobs/sha256/ab/12/", "blobs/sha256/../../"), "not a path of the blob store"},
        {"an absolute path", replaced(good, "blobs/sha256/ab/12/" + digest + "\"", "/etc/passwd\""), "not a path of the blob store"},
        {"a blob listed with another digest", replaced(good, "\"sha256\":\"" + digest, "\"sha256\":\"" + std::string(64, '9')),
         "listed with another digest"},
        {"no blobs array", replaced(good, "\"blobs\":", "\"blob\":"), "no \"blobs\" array"},
    };
    for (const auto& entry : table) {
        CAPTURE(entry.name);
        auto parsed = backup::parse_manifest(entry.text);
        REQUIRE_FALSE(parsed);
        CHECK(parsed.error().kind == error_kind::invalid);
        CHECK_THAT(parsed.error().message, Catch::Contains(entry.message));
    }
}
