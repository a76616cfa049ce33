#include <catch2/catch.hpp>

#include <string>

#include "wheelhouse/app/read_access.hpp"

using namespace wheelhouse;

TEST_CASE("read access: each read names the project a token must cover", "[server][read_access]") {
    const auto [target, project] = GENERATE(table<std::string, std::string>({
        {"/simple/", ""},
        {"/simple/Flash_Attn/", "flash-attn"},
        {"/simple/flash-attn", "flash-attn"},
        {"/variants/cu130-torch2.10/simple/", ""},
        {"/variants/cu130-torch2.10/simple/Nunchaku/", "nunchaku"},
        {"/files/" + std::string(64, 'a') + "/flash_attn-2.8.3+cu130torch2.10-cp313-cp313-linux_x86_64.whl",
         "flash-attn"},
        {"/files/" + std::string(64, 'a') + "/flash_attn-2.8.3-py3-none-any.whl.metadata", "flash-attn"},
        {"/files/" + std::string(64, 'a') + "/not-a-wheel.txt", ""},
        {"/api/v1/projects/Zope.Interface/variants", "zope-interface"},
        {"/api/v1/tokens", ""},
    }));
    CAPTURE(target);
    auto parsed = http_target::parse(target);
    REQUIRE(parsed);
    CHECK(app::project_read_by(*parsed) == project);
}
