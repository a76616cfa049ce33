#include <catch2/catch.hpp>

#include "wheelhouse/http/request_target.hpp"

using wheelhouse::http_target::parse;

TEST_CASE("http: request targets split into decoded segments", "[http]") {
    const auto simple = parse("/simple/flash-attn/");
    REQUIRE(simple);
    CHECK(simple->segments == std::vector<std::string>{"simple", "flash-attn", ""});
    CHECK(simple->trailing_slash());

    const auto bare = parse("/simple");
    REQUIRE(bare);
    CHECK(bare->segments == std::vector<std::string>{"simple"});

    const auto root = parse("/");
    REQUIRE(root);
    CHECK((root->segments.empty() || root->segments == std::vector<std::string>{""}));

    const auto file = parse("/files/abc/flash_attn-2.8.3%2Bcu128-cp312-cp312-linux_x86_64.whl?x=1&format=json");
    REQUIRE(file);
    CHECK(file->segments.at(2) == "flash_attn-2.8.3+cu128-cp312-cp312-linux_x86_64.whl");
    CHECK(file->query_value("format") == "json");
    CHECK(file->query_value("x") == "1");
    CHECK_FALSE(file->query_value("y"));
}

TEST_CASE("http: absurd targets are refused with the reason", "[http]") {
    const std::pair<const char*, const char*> table[] = {
        {"/simple/../", "'..'"},
        {"/simple/./x/", "'.'"},
        // fuzz/request_target_fuzz: the URL parser hid a leading "/./", so it passed as "/" or "/simple/".
        {"/./", "'.'"},
        {"/./simple/", "'.'"},
        {"/simple/%2e%2e/", "'..'"},
        {"/simple/a%00b/", "control character"},
        {"/files/a%2Fb", "encoded '/'"},
        {"/files/a%5Cb", "encoded '/' or '\\'"},
        {"/simple/%zz/", "not a valid path"},
        {"http://example.com/simple/", "not a valid path"},
        {"*", "not a valid path"},
    };
    for (const auto& [target, reason] : table) {
        CAPTURE(target);
        const auto parsed = parse(target);
        REQUIRE_FALSE(parsed);
        CHECK_THAT(parsed.error().message, Catch::Contains(reason));
    }
}

TEST_CASE("http: plain targets split the same as escaped ones", "[http]") {
    // Plain targets take a short path past the URL parser; each row's escaped twin takes the
    // parser, and both must give the same segments.
    const std::pair<const char*, const char*> table[] = {
        {"/simple/flash-attn/", "/%73imple/flash-attn/"},
        {"/simple/Flash_Attn.v2~x/", "/simple/Flash_Attn%2Ev2%7Ex/"},
        {"/simple/flash-attn", "/simple/flash-att%6E"},
        {"/variants/cu130-torch2.10/simple/", "/variants/cu130-torch2%2E10/simple/"},
        {"/a//b", "/a//%62"},
        {"/a/b//", "/a/%62//"},
        {"/simple/.x/..y/", "/simple/.x/..%79/"},
    };
    for (const auto& [plain, escaped] : table) {
        CAPTURE(plain);
        const auto fast = parse(plain);
        const auto full = parse(escaped);
        REQUIRE(fast);
        REQUIRE(full);
        CHECK(fast->segments == full->segments);
        CHECK(fast->query.empty());
    }
    CHECK(parse("/simple/flash-attn/")->segments == std::vector<std::string>{"simple", "flash-attn", ""});
    // Dot segments in plain characters are still refused.
    CHECK_FALSE(parse("/simple/x/.."));
    CHECK_FALSE(parse("/simple/./x"));
}
