#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "file_records.hpp"
#include "test_support.hpp"
#include "wheelhouse/catalog/catalog.hpp"
#include "wheelhouse/crypto/hasher.hpp"
#include "wheelhouse/pep825/variant_metadata.hpp"
#include "wheelhouse/sqlite/connection.hpp"

using namespace wheelhouse;
using wheelhouse::testing::temp_dir;

namespace {

constexpr std::string_view tags = "cp312-cp312-linux_x86_64";

pep825::variant_properties cuda(const std::string& bound, const std::string& arch) {
    return {{"nvidia", {{"cuda_version_lower_bound", {bound}}, {"sm_arch", {arch}}}}};
}

const pep825::variant_properties none;

pep825::variant_properties level(const std::string& value) { return {{"x86_64", {{"level", {value}}}}}; }

catalog::new_file variant_file(const std::string& label, const pep825::variant_properties& properties,
                               const std::string& namespaces = R"(["nvidia"])",
                               std::string_view platform = "linux_x86_64") {
    std::string with_tags(tags);
    with_tags.replace(with_tags.find("linux_x86_64"), 12, platform);
    catalog::new_file file;
    file.project_display_name = "flash_attn";
    file.file = testing::file_record_for("flash_attn-2.8.3-" + with_tags + "-" + label + ".whl");
    file.file.sha256 = crypto::sha256_hex(file.file.filename);
    file.file.variant_label = label;
    file.file.variant_properties = properties;
    file.file.variant_namespaces = namespaces;
    return file;
}

std::vector<catalog::release_variants_file> release_files(const catalog::catalog& catalog) {
    auto found = catalog.files_of_project("flash-attn");
    REQUIRE(found);
    REQUIRE(*found);
    return (*found)->release_variants;
}

std::unique_ptr<catalog::catalog> open_catalog(const temp_dir& dir) {
    auto opened = catalog::catalog::open(dir / "catalog.db");
    REQUIRE(opened);
    return std::move(opened).value();
}

}  // namespace

TEST_CASE("release variants: the file follows each add and delete, in the same commit", "[catalog][pep825]") {
    temp_dir dir;
    auto catalog = open_catalog(dir);
    REQUIRE(catalog->add_file(variant_file("cu128_sm90", cuda("12.8", "90_real"))));
    auto files = release_files(*catalog);
    REQUIRE(files.size() == 1);
    CHECK(files[0].filename == "flash_attn-2.8.3-variants.json");
    CHECK(files[0].normalized_version == "2.8.3");
    CHECK(files[0].sha256 == crypto::sha256_hex(files[0].content));
    auto first = pep825::parse_variant_metadata(files[0].content);
    REQUIRE(first);
    CHECK(first->variants.size() == 1);

    REQUIRE(catalog->add_file(variant_file("null", none)));
    const auto second = release_files(*catalog);
    REQUIRE(second.size() == 1);
    CHECK(second[0].sha256 != files[0].sha256);
    auto parsed = pep825::parse_variant_metadata(second[0].content);
    REQUIRE(parsed);
    CHECK(parsed->variants.contains("null"));
    CHECK(parsed->variants.contains("cu128_sm90"));
    // The old content is gone from its URL; the new one is found by its own.
    CHECK_FALSE(catalog->find_release_variants(files[0].sha256, files[0].filename).value().has_value());
    CHECK(catalog->find_release_variants(second[0].sha256, second[0].filename).value().has_value());

    REQUIRE(catalog->delete_file(variant_file("null", none).file.filename, "admin"));
    CHECK(release_files(*catalog)[0].content == files[0].content);
    REQUIRE(catalog->delete_file(variant_file("cu128_sm90", none).file.filename, "admin"));
    CHECK(release_files(*catalog).empty());
}

TEST_CASE("release variants: a label keeps one set of properties per release", "[catalog][pep825]") {
    temp_dir dir;
    auto catalog = open_catalog(dir);
    REQUIRE(catalog->add_file(variant_file("cu128_sm90", cuda("12.8", "90_real"))));
    // The same label and properties on another platform joins the release.
    REQUIRE(catalog->add_file(variant_file("cu128_sm90", cuda("12.8", "90_real"), R"(["nvidia"])", "linux_aarch64")));
    auto refused = catalog->add_file(variant_file("cu128_sm90", cuda("12.8", "80_real"), R"(["nvidia"])", "win_amd64"));
    REQUIRE_FALSE(refused);
    CHECK(refused.error().kind == error_kind::conflict);
    CHECK_THAT(refused.error().message, Catch::Contains("'cu128_sm90' already names other properties"));
    CHECK_THAT(refused.error().message, Catch::Contains("nvidia :: sm_arch :: 80_real"));
    CHECK_THAT(refused.error().message, Catch::Contains("nvidia :: sm_arch :: 90_real"));
    CHECK(catalog->files_of_project("flash-attn").value()->files.size() == 2);
}

TEST_CASE("release variants: namespace priorities merge or are refused", "[catalog][pep825]") {
    temp_dir dir;
    auto catalog = open_catalog(dir);
    REQUIRE(catalog->add_file(variant_file("cu128", cuda("12.8", "90_real"))));
    REQUIRE(catalog->add_file(variant_file("avx2", level("v3"), R"(["nvidia","x86_64"])")));
    auto parsed = pep825::parse_variant_metadata(release_files(*catalog)[0].content);
    REQUIRE(parsed);
    CHECK(parsed->namespace_priorities == std::vector<std::string>{"nvidia", "x86_64"});
    auto refused = catalog->add_file(variant_file("avx512", level("v4"), R"(["x86_64","nvidia"])"));
    REQUIRE_FALSE(refused);
    CHECK(refused.error().kind == error_kind::invalid);
    CHECK_THAT(refused.error().message, Catch::Contains("default-priorities.namespace conflicts"));
    // Deleting the wheel that brought x86_64 shortens the release's list again.
    REQUIRE(catalog->delete_file(variant_file("avx2", none).file.filename, "admin"));
    CHECK(pep825::parse_variant_metadata(release_files(*catalog)[0].content)->namespace_priorities ==
          std::vector<std::string>{"nvidia"});
}

TEST_CASE("release variants: a wheel's properties are kept as rows, read back by every reader, and go with it",
          "[catalog][pep825]") {
    temp_dir dir;
    auto catalog = open_catalog(dir);
    auto properties = cuda("12.8", "90_real");
    properties["nvidia"]["sm_arch"] = {"100_real", "120_real", "90_real"};
    properties["x86_64"]["level"] = {"v3"};
    const auto wheel = variant_file("cu128", properties, R"(["nvidia","x86_64"])");
    REQUIRE(catalog->add_file(wheel));
    REQUIRE(catalog->add_file(variant_file("null", none)));

    const auto& name = wheel.file.filename;
    CHECK(catalog->find_file(name).value()->variant_properties == properties);
    CHECK(catalog->find_file(wheel.file.sha256, name).value()->variant_properties == properties);
    const auto project = catalog->files_of_project("flash-attn");
    REQUIRE(project);
    REQUIRE(*project);
    for (const auto& file : (*project)->files) {
        CAPTURE(file.filename);
        CHECK(file.variant_properties == (file.filename == name ? properties : none));
    }
    const auto count_rows = [&] {
        std::int64_t count = -1;
        REQUIRE(catalog->read_snapshot([&](sqlite::connection& db) -> result<void> {
            count = db.query_int64("SELECT count(*) FROM variant_properties").value();
            return {};
        }));
        return count;
    };
    CHECK(count_rows() == 5);
    REQUIRE(catalog->delete_file(name, "admin"));
    CHECK(count_rows() == 0);
}
