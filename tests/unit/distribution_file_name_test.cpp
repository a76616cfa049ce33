#include <catch2/catch.hpp>

#include <string>

#include "wheelhouse/distribution/file_name.hpp"
#include "wheelhouse/pep825/variant_metadata.hpp"

using namespace wheelhouse;
using distribution::file_kind;

TEST_CASE("distribution: every kind of file the index serves names its project", "[distribution]") {
    struct row {
        std::string name;
        file_kind kind;
        const char* project;
        const char* row_filename;
    };
    const row table[] = {
        {"flash_attn-2.8.3+cu128torch2.8-cp312-cp312-linux_x86_64.whl", file_kind::wheel, "flash-attn",
         "flash_attn-2.8.3+cu128torch2.8-cp312-cp312-linux_x86_64.whl"},
        {"flash_attn-2.8.3.tar.gz", file_kind::sdist, "flash-attn", "flash_attn-2.8.3.tar.gz"},
        {"PyYAML-6.0-cp311-cp311-linux_x86_64.whl.metadata", file_kind::wheel_metadata, "pyyaml",
         "PyYAML-6.0-cp311-cp311-linux_x86_64.whl"},
        {"beta_proj-9.9.tar.gz.metadata", file_kind::sdist_metadata, "beta-proj", "beta_proj-9.9.tar.gz"},
        {"nunchaku-1.0.2-variants.json", file_kind::release_variants, "nunchaku", "nunchaku-1.0.2-variants.json"},
        {"zope_interface-7.0.post1-variants.json", file_kind::release_variants, "zope-interface",
         "zope_interface-7.0.post1-variants.json"},
        {"torch-2.10.0-cp314-cp314t-manylinux_2_28_x86_64-cu130_sm90.whl", file_kind::wheel, "torch",
         "torch-2.10.0-cp314-cp314t-manylinux_2_28_x86_64-cu130_sm90.whl"},
    };
    for (const auto& expected : table) {
        CAPTURE(expected.name);
        auto named = distribution::parse_file_name(expected.name);
        if (!named) FAIL(named.error().message);
        CHECK(named->kind == expected.kind);
        CHECK(named->project() == expected.project);
        CHECK(named->row_filename() == expected.row_filename);
        CHECK(named->is_metadata() == (expected.kind == file_kind::wheel_metadata ||
                                       expected.kind == file_kind::sdist_metadata));
    }
}

TEST_CASE("distribution: the release file's name is the one pep825 writes", "[distribution]") {
    for (const auto& [project, version] : {std::pair{"flash-attn", "2.8.3"}, std::pair{"a.b_c", "1.0rc1"}}) {
        const auto written = pep825::release_variants_filename(project, version);
        auto named = distribution::parse_file_name(written);
        REQUIRE(named);
        CHECK(named->kind == file_kind::release_variants);
        CHECK(named->project() == std::string(project == std::string("a.b_c") ? "a-b-c" : project));
    }
}

TEST_CASE("distribution: a name that names no project is refused, saying why", "[distribution]") {
    const std::string names[] = {
        "", "x", ".whl", ".tar.gz", ".metadata", "-variants.json", "x.metadata",
        "gamma_proj", "gamma_proj-1.0.zip", "gamma_proj-1.0.tgz", "Gamma-Proj-1.0.tar.gz",
        "gamma_proj-notaversion.tar.gz", "gamma-proj-1.0-variants.json", "gamma_proj-variants.json",
        "gamma_proj-1.0-x-variants.json", "gamma_proj-1.0-VARIANTS.JSON", "gamma_proj-1.0-py3-none-any.whl.zip",
        "gamma_proj-1.0-py3-none-any.whl.metadata.metadata", "gamma_proj-1.0-py3-none-any.whl.METADATA",
        "g\xffmma-1.0-variants.json", "gamma/proj-1.0-variants.json", std::string(300, 'a') + "-1.0-variants.json",
        std::string("gamma\0proj-1.0.tar.gz", 21), "..-1.0-variants.json", "gamma_proj-1.0-variants.json\n",
    };
    for (const auto& name : names) {
        CAPTURE(name);
        auto named = distribution::parse_file_name(name);
        REQUIRE_FALSE(named);
        CHECK(named.error().kind == error_kind::invalid);
        CHECK_FALSE(named.error().message.empty());
        for (const char c : named.error().message) CHECK((static_cast<unsigned char>(c) >= 0x20 || c == '\n'));
    }
}

TEST_CASE("distribution: uploads take wheels and sdists only", "[distribution]") {
    CHECK(distribution::parse_archive_name("demo-1.0.tar.gz"));
    CHECK(distribution::parse_archive_name("demo-1.0-py3-none-any.whl"));
    CHECK_FALSE(distribution::parse_archive_name("demo-1.0-py3-none-any.whl.metadata"));
    CHECK_FALSE(distribution::parse_archive_name("demo-1.0-variants.json"));
    auto sdist = distribution::parse_archive_name("beta_proj-9.9.tar.gz");
    REQUIRE(sdist);
    CHECK(distribution::project_of(*sdist) == "beta-proj");
}
