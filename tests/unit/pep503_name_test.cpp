#include <catch2/catch.hpp>

#include "wheelhouse/pep503/name.hpp"

using wheelhouse::pep503::is_valid_project_name;
using wheelhouse::pep503::normalize;

TEST_CASE("pep503: names normalise as the specification's examples do", "[pep503]") {
    const std::pair<const char*, const char*> table[] = {
        {"friendly-bard", "friendly-bard"},  {"Friendly-Bard", "friendly-bard"},
        {"FRIENDLY-BARD", "friendly-bard"},  {"friendly.bard", "friendly-bard"},
        {"friendly_bard", "friendly-bard"},  {"friendly--bard", "friendly-bard"},
        {"FrIeNdLy-._.-bArD", "friendly-bard"}, {"Flash_Attn", "flash-attn"},
        {"flash_attn", "flash-attn"},        {"zope.interface", "zope-interface"},
        {"PyYAML", "pyyaml"},                {"Django", "django"},
        {"SageAttention", "sageattention"},  {"cupy_cuda12x", "cupy-cuda12x"},
        {"nvidia_cudnn_cu12", "nvidia-cudnn-cu12"}, {"torch", "torch"},
        {"ruamel.yaml.clib", "ruamel-yaml-clib"}, {"a", "a"},
    };
    for (const auto& [name, expected] : table) {
        CAPTURE(name);
        CHECK(normalize(name) == expected);
    }
}

TEST_CASE("pep503: validity of project names", "[pep503]") {
    for (const char* valid : {"a", "A1", "flash-attn", "flash_attn", "zope.interface", "x.y_z-1", "9"}) {
        CAPTURE(valid);
        CHECK(is_valid_project_name(valid));
    }
    for (const char* bad : {"", "-flash", "flash-", ".hidden", "trailing.", "has space", "é", "a/b", "a+b", "_"}) {
        CAPTURE(bad);
        CHECK_FALSE(is_valid_project_name(bad));
    }
}
