#include <catch2/catch.hpp>

#include <string>

#include <boost/json.hpp>

#include "wheelhouse/text/json_object.hpp"

using namespace wheelhouse;

TEST_CASE("text: a JSON object from outside, refused when any object repeats a key", "[text]") {
    auto read = text::parse_json_object(R"({"aud": "a", "nested": {"aud": "b"}, "list": [{"x": 1}, {"x": 2}]})");
    REQUIRE(read);
    CHECK(read->at("aud") == "a");
    const std::pair<std::string, std::string> refused[] = {
        {R"({"aud": "a", "aud": "b"})", "the key 'aud' appears twice"},
        {R"({"a": {"kid": 1, "kid": 2}})", "the key 'kid' appears twice"},
        {R"({"a": [{"x": 1, "x": 1}]})", "the key 'x' appears twice"},
        {R"({"\u0061": 1, "a": 2})", "the key 'a' appears twice"},  // the same key, escaped once
        {"[]", "not a JSON object"},
        {"", "not valid JSON"},
        {R"({"a": 1} trailing)", "not valid JSON"},
        {std::string(40, '[') + std::string(40, ']'), "not valid JSON"},  // deeper than 32
    };
    for (const auto& [text, reason] : refused) {
        CAPTURE(text);
        auto parsed = text::parse_json_object(text);
        REQUIRE_FALSE(parsed);
        CHECK_THAT(parsed.error().message, Catch::Contains(reason));
    }
}

TEST_CASE("text: a JSON object's nesting bound is the caller's, and a deep document is refused in words", "[text]") {
    auto nested = [](int levels) { return R"({"x":)" + std::string(levels - 1, '[') + std::string(levels - 1, ']') + "}"; };
    CHECK(text::parse_json_object(nested(8), {.max_depth = 8}));
    auto deep = text::parse_json_object(nested(9), {.max_depth = 8});
    REQUIRE_FALSE(deep);
    CHECK_THAT(deep.error().message, Catch::Contains("nested deeper than 8 levels"));
    // A document of many small objects costs one set per depth, not one per object.
    std::string many = R"({"files":[)";
    for (int i = 0; i < 10000; ++i) many += std::string(i ? "," : "") + R"({"a":1,"b":2})";
    auto wide = text::parse_json_object(many + "]}");
    REQUIRE(wide);
    CHECK(wide->at("files").as_array().size() == 10000);
}
