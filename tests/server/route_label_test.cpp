#include <catch2/catch.hpp>

#include "test_server.hpp"

using namespace wheelhouse;
using namespace wheelhouse::testing;
using metrics::route;

TEST_CASE("route label: requests are counted under the label of the row they reach, never the raw path",
          "[server][route_label]") {
    struct row {
        http::verb method;
        const char* target;
        route expected;
    };
    const row table[] = {
        {http::verb::get, "/simple/", route::simple_index},
        {http::verb::get, "/simple", route::simple_index},
        {http::verb::get, "/simple/?format=application/vnd.pypi.simple.v1+json", route::simple_index},
        {http::verb::get, "/simple/flash-attn/", route::simple_project},
        {http::verb::get, "/simple/Flash_Attn", route::simple_project},
        {http::verb::head, "/simple/xformers/?format=json", route::simple_project},
        {http::verb::get, "/variants/cu130-torch2.10/simple/", route::variants},
        {http::verb::get, "/variants/cpu/simple/cupy/", route::variants},
        {http::verb::get, "/files/0123abcd/flash_attn-2.8.3+cu130torch2.10-cp312-cp312-linux_x86_64.whl", route::files},
        {http::verb::get, "/files/0123abcd/flash_attn-2.8.3-cp312-cp312-linux_x86_64.whl.metadata", route::metadata},
        {http::verb::get, "/files/0123abcd/.metadata", route::files},  // no name before the suffix
        {http::verb::post, "/legacy/", route::upload},
        {http::verb::get, "/legacy/", route::upload},  // a 405 counts under its path's row
        {http::verb::put, "/api/v1/files/cupy-13.6.0-cp313-cp313-manylinux2014_x86_64.whl", route::upload},
        {http::verb::get, "/api/v1/projects", route::api},
        {http::verb::post, "/api/v1/tokens", route::api},
        {http::verb::get, "/", route::static_files},
        {http::verb::get, "/?x=1", route::static_files},
        {http::verb::get, "/static/app.css", route::static_files},
        {http::verb::get, "/favicon.ico", route::other},  // no route serves it: a 404 like any other
        {http::verb::get, "/healthz", route::healthz},
        {http::verb::get, "/healthz/extra", route::other},
        {http::verb::get, "/metrics", route::metrics},
        {http::verb::get, "/_/oidc/audience", route::trusted_publishing},
        {http::verb::post, "/_/oidc/mint-token", route::trusted_publishing},
        {http::verb::get, "/.well-known/pytp?discover=%2Flegacy%2F", route::trusted_publishing},
        {http::verb::get, "/_/other", route::other},
        {http::verb::get, "/api/v1/projects/flash-attn/publishers", route::api},
        {http::verb::get, "/wp-login.php/x", route::other},
        {http::verb::get, "/nothing-here", route::other},
        {http::verb::get, "/simple/%00/", route::other},  // refused before routing
        {http::verb::patch, "/simple/", route::simple_index},
    };
    test_server server;
    for (const auto& [method, target, expected] : table) {
        CAPTURE(http::to_string(method), target);
        const auto before = requests_counted(server, expected);
        const auto response = server.request(method, target);
        CAPTURE(response.result_int());
        CHECK(counted_once_more(server, expected, before));
    }
}
