#include <catch2/catch.hpp>

#include <string>

#include <boost/json/parse.hpp>

#include "wheelhouse/text/pretty_json.hpp"

using wheelhouse::text::pretty_json;

TEST_CASE("text: pretty JSON is laid out as Python's json.dumps(indent=2)", "[text]") {
    // Expected values are json.dumps(json.loads(input), indent=2, ensure_ascii=False) of Python 3.11.
    struct example {
        const char* input;
        const char* expected;
    };
    const example examples[] = {
        {"{}", "{}"},
        {"[]", "[]"},
        {"null", "null"},
        {"18446744073709551615", "18446744073709551615"},
        {R"("a\"b")", R"("a\"b")"},
        {R"({"a":1})", "{\n  \"a\": 1\n}"},
        {R"([1,"x",true,null])", "[\n  1,\n  \"x\",\n  true,\n  null\n]"},
        {R"({"tags":["cp312"],"build":null,"variant":{}})",
         "{\n  \"tags\": [\n    \"cp312\"\n  ],\n  \"build\": null,\n  \"variant\": {}\n}"},
        {R"({"build":{"number":280,"suffix":".129"},"x":[[],{}]})",
         "{\n  \"build\": {\n    \"number\": 280,\n    \"suffix\": \".129\"\n  },\n  \"x\": [\n    [],\n    {}\n  ]\n}"},
        {R"({"k\ny":"v\t"})", "{\n  \"k\\ny\": \"v\\t\"\n}"},
    };
    for (const auto& [input, expected] : examples) {
        CAPTURE(input);
        CHECK(pretty_json(boost::json::parse(input)) == expected);
    }
}

TEST_CASE("text: pretty JSON reads back as the value it was made from", "[text]") {
    const auto value = boost::json::parse(
        R"({"filename":"a-1.0-py3-none-any.whl","build":{"number":1,"suffix":"","text":"1"},)"
        R"("python_tags":["py2","py3"],"variant":{"cuda":"12.8","cxx11abi":false},"local":null})");
    CHECK(boost::json::parse(pretty_json(value)) == value);
}
