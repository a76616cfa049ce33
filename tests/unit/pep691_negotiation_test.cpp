#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "wheelhouse/pep691/negotiation.hpp"

using namespace wheelhouse::pep691;

namespace {
std::string pick(std::string_view accept) {
    const auto choice = negotiate(accept);
    return choice ? std::string(choice->content_type) : std::string("406");
}
}  // namespace

TEST_CASE("pep691: Accept headers choose the page format", "[pep691]") {
    const std::pair<const char*, const char*> table[] = {
        // pip >= 22.2 sends exactly this
        {"application/vnd.pypi.simple.v1+json, application/vnd.pypi.simple.v1+html; q=0.1, text/html; q=0.01",
         "application/vnd.pypi.simple.v1+json"},
        {"", "text/html; charset=utf-8"},
        {"*/*", "text/html; charset=utf-8"},
        {"text/html", "text/html; charset=utf-8"},
        {"text/*", "text/html; charset=utf-8"},
        {"application/vnd.pypi.simple.v1+html", "application/vnd.pypi.simple.v1+html"},
        {"application/vnd.pypi.simple.latest+json", "application/vnd.pypi.simple.v1+json"},
        {"application/vnd.pypi.simple.latest+html", "application/vnd.pypi.simple.v1+html"},
        {"text/html;q=0.9, application/vnd.pypi.simple.v1+json;q=0.5", "text/html; charset=utf-8"},
        {"application/vnd.pypi.simple.v1+json;q=0.2, */*;q=0.1", "application/vnd.pypi.simple.v1+json"},
        {"application/*", "application/vnd.pypi.simple.v1+json"},
        {"APPLICATION/VND.PYPI.SIMPLE.V1+JSON", "application/vnd.pypi.simple.v1+json"},
        {"application/json", "406"},
        {"application/vnd.pypi.simple.v2+json", "406"},
        {"text/html;q=0", "406"},
        {"*/*;q=0.5, text/html;q=0", "application/vnd.pypi.simple.v1+json"},
        {"text/html; q=1.0, application/vnd.pypi.simple.v1+json; q=1.000", "application/vnd.pypi.simple.v1+json"},
        {"application/vnd.pypi.simple.v1+json;q=abc, text/html", "text/html; charset=utf-8"},
        {" , ,text/html", "text/html; charset=utf-8"},
    };
    for (const auto& [accept, expected] : table) {
        CAPTURE(accept);
        CHECK(pick(accept) == expected);
    }
}

// fuzz/pep691_negotiation_fuzz: of two equally specific ranges the first listed won, so the
// same ranges in another order gave 406 one way and HTML the other.
TEST_CASE("pep691: the order of the media ranges does not matter", "[pep691]") {
    const std::pair<const char*, const char*> table[] = {
        {"text/html;q=0.50.5, text/ht, text/html;q=0.9", "text/html; charset=utf-8"},
        {"text/html;q=0, text/html", "text/html; charset=utf-8"},
        {"application/*;q=0, application/*;q=0.5, text/html;q=0.4", "application/vnd.pypi.simple.v1+json"},
        {"text/html;q=0.2, */*;q=0.3, text/html;q=0.1", "application/vnd.pypi.simple.v1+json"},
    };
    for (const auto& [accept, expected] : table) {
        CAPTURE(accept);
        CHECK(pick(accept) == expected);
        // The same ranges, last first.
        std::vector<std::string> ranges;
        for (std::string_view rest = accept; !rest.empty();) {
            const auto comma = rest.find(',');
            ranges.emplace_back(rest.substr(0, comma));
            rest = comma == std::string_view::npos ? std::string_view{} : rest.substr(comma + 1);
        }
        std::string reversed;
        for (auto it = ranges.rbegin(); it != ranges.rend(); ++it) reversed += (reversed.empty() ? "" : ",") + *it;
        CAPTURE(reversed);
        CHECK(pick(reversed) == expected);
    }
}

TEST_CASE("pep691: ?format= overrides the Accept header", "[pep691]") {
    CHECK(choose_by_format_parameter("json")->format == page_format::json);
    CHECK(choose_by_format_parameter("HTML")->format == page_format::html);
    CHECK(choose_by_format_parameter("application/vnd.pypi.simple.v1+json")->format == page_format::json);
    CHECK(choose_by_format_parameter("text/html")->format == page_format::html);
    CHECK(choose_by_format_parameter("application/vnd.pypi.simple.v1 json")->format == page_format::json);
    CHECK_FALSE(choose_by_format_parameter("xml"));
    CHECK_FALSE(choose_by_format_parameter(""));
}

TEST_CASE("pep691: pips that read core metadata only from HTML are recognised", "[pep691]") {
    CHECK(prefers_html_for_core_metadata("pip/23.0.1 {\"ci\":null,\"cpu\":\"x86_64\"}"));
    CHECK(prefers_html_for_core_metadata("pip/22.3"));
    CHECK(prefers_html_for_core_metadata("pip/23.1.2 {}"));
    CHECK_FALSE(prefers_html_for_core_metadata("pip/23.2 {}"));
    CHECK_FALSE(prefers_html_for_core_metadata("pip/25.1.1 {}"));
    CHECK_FALSE(prefers_html_for_core_metadata("uv/0.8.0"));
    CHECK_FALSE(prefers_html_for_core_metadata("curl/7.88.1"));
    CHECK_FALSE(prefers_html_for_core_metadata("pip/"));
    CHECK_FALSE(prefers_html_for_core_metadata(""));
}

TEST_CASE("pep691: html_only negotiation skips the JSON offers", "[pep691]") {
    const auto pip = "application/vnd.pypi.simple.v1+json, application/vnd.pypi.simple.v1+html; q=0.1, text/html; q=0.01";
    CHECK(negotiate(pip, true)->content_type == html_v1);
    CHECK_FALSE(negotiate("application/vnd.pypi.simple.v1+json", true));
}
