#include <catch2/catch.hpp>

#include <boost/json.hpp>

#include "file_records.hpp"
#include "wheelhouse/render/variant_matrix.hpp"

using namespace wheelhouse;
namespace json = boost::json;

TEST_CASE("variant matrix: natural order puts numbers in their place", "[render][variant_matrix]") {
    const std::pair<const char*, const char*> ascending[] = {
        {"cp39", "cp312"}, {"cp312", "cp313"}, {"cp313", "cp313t"}, {"2.9", "2.10"},   {"2.10", "2.10.0"},
        {"8.9", "12.0"},   {"9.0", "9.0a"},    {"12", "12.8"},      {"12.8", "13.0"}, {"09", "9"},
        {"", "a"},         {"py2", "py3"},     {"linux_x86_64", "manylinux_2_28_x86_64"},
    };
    for (const auto& [low, high] : ascending) {
        CAPTURE(low, high);
        CHECK(render::natural_less(low, high));
        CHECK_FALSE(render::natural_less(high, low));
        CHECK_FALSE(render::natural_less(low, low));
    }
}

TEST_CASE("variant matrix: versions newest first, builds with their variant, selectors and links",
          "[render][variant_matrix]") {
    auto files = testing::file_records_for({
        "flash_attn-2.8.3+cu128torch2.8-cp312-cp312-linux_x86_64.whl",
        "flash_attn-2.8.3+cu130torch2.10-cp312-cp312-linux_x86_64.whl",
        "flash_attn-2.8.3+cu130sm89torch2.10.0-cp312-cp312-linux_x86_64.whl",
        "flash_attn-2.8.3+cu130sm120torch2.10.0-cp312-cp312-linux_x86_64.whl",
        "flash_attn-2.8.3+cu130torch2.10-cp39-cp39-linux_x86_64.whl",
        "flash_attn-2.8.10+cu12torch2.8cxx11abiFALSE-cp312-cp312-linux_x86_64.whl",
        "flash_attn-2.8.2+rocm6.4torch2.8-cp312-cp312-manylinux_2_28_x86_64.whl",
        "flash_attn-2.8.2-py2.py3-none-any.whl",
    });
    files[0].yanked_reason = "built against the wrong CUDA";
    files[0].requires_python = ">=3.9";
    catalog::project_record project;
    project.name = "flash-attn";
    project.display_name = "flash_attn";
    render::link_options links;
    links.files_base = "https://index.example/files/";

    const auto page = json::parse(render::variant_matrix_json(project, files, links)).as_object();
    CHECK(page.at("name") == "flash-attn");
    CHECK(page.at("display_name") == "flash_attn");
    CHECK(page.at("status") == "active");

    const auto& axes = page.at("axes").as_object();
    CHECK(axes.at("python") == json::array{"cp39", "cp312", "py2", "py3"});
    CHECK(axes.at("abi") == json::array{"cp39", "cp312", "none"});
    CHECK(axes.at("platform") == json::array{"any", "linux_x86_64", "manylinux_2_28_x86_64"});
    CHECK(axes.at("accelerator") == json::array{"cuda", "rocm"});
    CHECK(axes.at("cuda") == json::array{"12", "12.8", "13.0"});
    CHECK(axes.at("rocm") == json::array{"6.4"});
    CHECK(axes.at("torch") == json::array{"2.8", "2.10", "2.10.0"});
    CHECK(axes.at("sm") == json::array{"8.9", "12.0"});
    CHECK(axes.at("cxx11abi") == json::array{false});

    const auto& versions = page.at("versions").as_array();
    REQUIRE(versions.size() == 3);
    CHECK(versions[0].at("version") == "2.8.10");  // PEP 440, not text: 2.8.10 > 2.8.3
    CHECK(versions[1].at("version") == "2.8.3");
    CHECK(versions[2].at("version") == "2.8.2");
    const auto& builds = versions[1].at("builds").as_array();
    REQUIRE(builds.size() == 5);
    // by filename
    CHECK(builds[0].at("filename") == "flash_attn-2.8.3+cu128torch2.8-cp312-cp312-linux_x86_64.whl");
    CHECK(builds[1].at("filename") == "flash_attn-2.8.3+cu130sm120torch2.10.0-cp312-cp312-linux_x86_64.whl");

    const auto& yanked = builds[0].as_object();
    CHECK(yanked.at("version") == "2.8.3+cu128torch2.8");
    CHECK(yanked.at("python_tag") == "cp312");
    CHECK(yanked.at("abi_tag") == "cp312");
    CHECK(yanked.at("platform_tag") == "linux_x86_64");
    CHECK(yanked.at("build_tag").is_null());
    CHECK(yanked.at("variant") == json::object{{"cuda", "12.8"}, {"torch", "2.8"}});
    CHECK(yanked.at("yanked") == "built against the wrong CUDA");
    CHECK(yanked.at("requires_python") == ">=3.9");
    CHECK(yanked.at("sha256").as_string() == std::string(64, 'a'));
    CHECK(yanked.at("url").as_string() == "https://index.example/files/" + std::string(64, 'a') +
                                  "/flash_attn-2.8.3%2Bcu128torch2.8-cp312-cp312-linux_x86_64.whl");
    // the CUDA major is a way to ask for it too, after the build's own spelling
    CHECK(yanked.at("selectors") == json::array{"cu128-torch2.8", "cu12-torch2.8", "cu128", "torch2.8", "cu12"});

    const auto& sm120 = builds[1].as_object();
    CHECK(sm120.at("variant") == json::object{{"cuda", "13.0"}, {"sm", "12.0"}, {"torch", "2.10.0"}});
    CHECK(sm120.at("selectors") == json::array{"cu130-torch2.10-sm120", "cu13-torch2.10-sm120", "cu130-sm120",
                                               "torch2.10-sm120", "cu13-sm120", "sm120"});
    CHECK(sm120.at("yanked") == false);
    CHECK(sm120.at("requires_python").is_null());

    // '+' sorts before '-': the ROCm build comes first
    const auto& pure = versions[2].at("builds").as_array().at(1).as_object();
    CHECK(pure.at("filename") == "flash_attn-2.8.2-py2.py3-none-any.whl");
    CHECK(pure.at("variant") == json::object{});
    CHECK(pure.at("selectors") == json::array{});
}

TEST_CASE("variant matrix: each build's column in selector words, and the other spellings of its index",
          "[render][variant_matrix]") {
    const auto files = testing::file_records_for({
        "flash_attn-2.8.3+cu130sm89torch2.10.0-cp312-cp312-linux_x86_64.whl",
        "flash_attn-2.8.3+cu130torch2.10-cp312-cp312-linux_x86_64.whl",
        "flash_attn-2.8.3+cu130torch2.10.0-cp311-cp311-linux_x86_64.whl",
        "flash_attn-2.8.3-cp312-cp312-win_amd64.whl",
        "flash_attn-2.8.3-py3-none-any.whl",
    });
    catalog::project_record project;
    project.name = project.display_name = "flash-attn";
    const auto page = json::parse(render::variant_matrix_json(project, files, {})).as_object();
    const auto& builds = page.at("versions").at(0).at("builds").as_array();
    REQUIRE(builds.size() == 5);
    auto build = [&](std::string_view filename) {
        for (const auto& one : builds) {
            if (one.at("filename").as_string() == filename) return one.as_object();
        }
        FAIL("no build " << filename);
        return json::object{};
    };
    const auto sm89 = build("flash_attn-2.8.3+cu130sm89torch2.10.0-cp312-cp312-linux_x86_64.whl");
    CHECK(sm89.at("family") == "cu130 · torch2.10 · sm89");
    CHECK(sm89.at("selectors").at(0) == "cu130-torch2.10-sm89");
    CHECK(sm89.at("spellings") == json::array{"cu130sm89torch2.10", "cu130_torch2.10_sm89", "torch2.10+cu130-sm89",
                                              "cu130-torch2.10-sm8.9", "cuda13.0-torch2.10-sm89"});
    // torch 2.10 and 2.10.0 head one column, spelled once
    CHECK(build("flash_attn-2.8.3+cu130torch2.10-cp312-cp312-linux_x86_64.whl").at("family") == "cu130 · torch2.10");
    CHECK(build("flash_attn-2.8.3+cu130torch2.10.0-cp311-cp311-linux_x86_64.whl").at("family") == "cu130 · torch2.10");
    // a Windows build without a label is not a pure wheel
    const auto windows = build("flash_attn-2.8.3-cp312-cp312-win_amd64.whl");
    CHECK(windows.at("family") == "no variant");
    CHECK(windows.at("spellings") == json::array{});
    CHECK(build("flash_attn-2.8.3-py3-none-any.whl").at("family") == "any");
}
