#include <catch2/catch.hpp>

#include "wheelhouse/app/route_label.hpp"
#include "wheelhouse/app/route_table.hpp"

using namespace wheelhouse;
using metrics::route;

TEST_CASE("route_label: requests are labelled by the route they reach, never the raw path", "[route_label]") {
    struct row {
        const char* method;
        const char* target;
        route expected;
    };
    const row table[] = {
        {"GET", "/simple/", route::simple_index},
        {"GET", "/simple", route::simple_index},
        {"GET", "/simple/?format=application/vnd.pypi.simple.v1+json", route::simple_index},
        {"GET", "/simple/flash-attn/", route::simple_project},
        {"GET", "/simple/Flash_Attn", route::simple_project},
        {"HEAD", "/simple/xformers/?format=json", route::simple_project},
        {"GET", "/variants/cu130-torch2.10/simple/", route::variants},
        {"GET", "/variants/cpu/simple/cupy/", route::variants},
        {"GET", "/files/0123abcd/flash_attn-2.8.3+cu130torch2.10-cp312-cp312-linux_x86_64.whl", route::files},
        {"GET", "/files/0123abcd/flash_attn-2.8.3-cp312-cp312-linux_x86_64.whl.metadata", route::metadata},
        {"POST", "/legacy/", route::upload},
        {"GET", "/legacy/", route::upload},
        {"PUT", "/api/v1/files/cupy-13.6.0-cp313-cp313-manylinux2014_x86_64.whl", route::upload},
        {"GET", "/api/v1/files/", route::api},
        {"GET", "/api/v1/projects", route::api},
        {"POST", "/api/v1/tokens", route::api},
        {"GET", "/", route::static_files},
        {"GET", "/?x=1", route::static_files},
        {"GET", "/static/app.css", route::static_files},
        {"GET", "/favicon.ico", route::other},  // no route serves it: a 404 like any other
        {"GET", "/healthz", route::healthz},
        {"GET", "/healthz/extra", route::other},
        {"GET", "/metrics", route::metrics},
        {"GET", "/_/oidc/audience", route::trusted_publishing},
        {"POST", "/_/oidc/mint-token", route::trusted_publishing},
        {"GET", "/.well-known/pytp?discover=%2Flegacy%2F", route::trusted_publishing},
        {"GET", "/_/other", route::other},
        {"GET", "/api/v1/projects/flash-attn/publishers", route::api},
        {"GET", "/wp-login.php/x", route::other},
        {"GET", "/nothing-here", route::other},
        {"GET", "http://example.com/simple/", route::other},
        {"-", "-", route::other},
        {"GET", "", route::other},
    };
    auto routes = app::router::build(app::route_table());
    REQUIRE(routes);
    for (const auto& [method, target, expected] : table) {
        INFO(method << " " << target);
        CHECK(to_string(app::route_label(*routes, method, target)) == to_string(expected));
    }
}
