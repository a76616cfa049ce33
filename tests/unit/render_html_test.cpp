#include <catch2/catch.hpp>

#include "wheelhouse/render/html.hpp"

using namespace wheelhouse::render;

TEST_CASE("render: HTML escaping leaves nothing a browser would run", "[render]") {
    CHECK(html_escape("<img src=x onerror=alert(1)>") == "&lt;img src=x onerror=alert(1)&gt;");
    CHECK(html_escape(">=3.9, <3.14") == "&gt;=3.9, &lt;3.14");
    CHECK(html_escape("a \"quoted\" & 'single'") == "a &quot;quoted&quot; &amp; &#39;single&#39;");
    CHECK(html_escape("plain") == "plain");
}

TEST_CASE("render: path segments are percent-encoded", "[render]") {
    std::string out;
    append_percent_encoded_segment(out, "nunchaku-1.0.2+cu130sm89torch2.10.0-cp313-cp313-linux_x86_64.whl");
    CHECK(out == "nunchaku-1.0.2%2Bcu130sm89torch2.10.0-cp313-cp313-linux_x86_64.whl");
    out.clear();
    append_percent_encoded_segment(out, "a b/c~d");
    CHECK(out == "a%20b%2Fc~d");
}
