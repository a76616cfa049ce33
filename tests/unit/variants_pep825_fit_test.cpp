#include <catch2/catch.hpp>

#include <algorithm>
#include <string>

#include "file_records.hpp"
#include "wheelhouse/pep825/variant_metadata.hpp"
#include "wheelhouse/variants/pep825_fit.hpp"
#include "wheelhouse/catalog/variant_view.hpp"

using namespace wheelhouse;
using variants::pep825_fit;

namespace {

pep825::variant_properties cuda(const std::string& bound, const std::string& arch) {
    return {{"nvidia", {{"cuda_version_lower_bound", {bound}}, {"sm_arch", {arch}}}}};
}

variants::selector wanted(std::string_view text) {
    auto parsed = variants::parse_selector(text);
    REQUIRE(parsed);
    return *parsed;
}

catalog::file_record variant_wheel(const std::string& label, const pep825::variant_properties& properties) {
    auto file = testing::file_record_for("flash_attn-2.8.3-cp312-cp312-linux_x86_64-" + label + ".whl");
    file.variant_label = label;
    file.variant_properties = properties;
    return file;
}

}  // namespace

TEST_CASE("pep825 fit: a CUDA lower bound fits later minors of its major", "[variants][pep825]") {
    CHECK(pep825_fit(cuda("12.8", "90_real"), wanted("cu128-sm90")));
    CHECK(pep825_fit(cuda("12.8", "90_real"), wanted("cu129-sm90")));
    CHECK_FALSE(pep825_fit(cuda("12.8", "90_real"), wanted("cu126-sm90")));
    CHECK_FALSE(pep825_fit(cuda("12.8", "90_real"), wanted("cu130-sm90")));
    CHECK_FALSE(pep825_fit(cuda("12.8", "90_real"), wanted("cpu")));
    CHECK(*pep825_fit(cuda("12.8", "90_real"), wanted("cu129-sm90")) >
          *pep825_fit(cuda("12.6", "90_real"), wanted("cu129-sm90")));
}

TEST_CASE("pep825 fit: SASS runs on its GPU, PTX on it and later ones", "[variants][pep825]") {
    CHECK(pep825_fit(cuda("12.8", "120_real"), wanted("cu128-sm120")));
    CHECK_FALSE(pep825_fit(cuda("12.8", "120_real"), wanted("cu128-sm90")));
    CHECK_FALSE(pep825_fit(cuda("12.8", "90_real"), wanted("cu128-sm120")));
    CHECK(pep825_fit(cuda("12.8", "90_virtual"), wanted("cu128-sm120")));
    CHECK_FALSE(pep825_fit(cuda("12.8", "90_virtual"), wanted("cu128-sm89")));
    CHECK(*pep825_fit(cuda("12.8", "120_real"), wanted("cu128-sm120")) >
          *pep825_fit(cuda("12.8", "90_virtual"), wanted("cu128-sm120")));
    // Pinning what the selector leaves open counts against a build; the null variant fits all.
    const pep825::variant_properties any_gpu = {{"nvidia", {{"cuda_version_lower_bound", {"12.8"}}}}};
    CHECK(*pep825_fit(any_gpu, wanted("cu128")) > *pep825_fit(cuda("12.8", "90_real"), wanted("cu128")));
    CHECK(pep825_fit({}, wanted("cpu")) == 0);
}

TEST_CASE("pep825 fit: a variant index lists the best PEP 825 build beside the best plain one", "[variants][pep825]") {
    std::vector<catalog::file_record> files = {
        variant_wheel("null", {}),
        variant_wheel("cu128_sm90", cuda("12.8", "90_real")),
        variant_wheel("cu128_sm120", cuda("12.8", "120_real")),
        variant_wheel("cu130_sm120", cuda("13.0", "120_real")),
        testing::file_record_for("flash_attn-2.8.3+cu128torch2.8-cp312-cp312-linux_x86_64.whl"),
        testing::file_record_for("flash_attn-2.8.3-cp312-cp312-linux_x86_64.whl"),
    };
    const auto names = [&](std::string_view selector) {
        std::vector<std::string> out;
        for (const auto index : catalog::listed_files(files, wanted(selector))) out.push_back(files[index].filename);
        return out;
    };
    CHECK(names("cu128-sm120") == std::vector<std::string>{
                                      "flash_attn-2.8.3-cp312-cp312-linux_x86_64-cu128_sm120.whl",
                                      "flash_attn-2.8.3+cu128torch2.8-cp312-cp312-linux_x86_64.whl",
                                      "flash_attn-2.8.3-cp312-cp312-linux_x86_64.whl"});
    CHECK(names("cu130-sm120")[0] == "flash_attn-2.8.3-cp312-cp312-linux_x86_64-cu130_sm120.whl");
    CHECK(names("cpu") == std::vector<std::string>{"flash_attn-2.8.3-cp312-cp312-linux_x86_64-null.whl",
                                                   "flash_attn-2.8.3-cp312-cp312-linux_x86_64.whl"});
    const auto reaching = catalog::reaching_selectors(files);
    CHECK(std::find(reaching[2].begin(), reaching[2].end(), "cu128-sm120") != reaching[2].end());
}
