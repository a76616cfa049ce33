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
        {"/a/b", "/a//%62"},
        {"/a/b/", "/a/%62//"},
        {"/simple/.x/..y/", "/simple/.x/..%79/"},
        // A local label's '+' and an epoch's '!' are themselves in a path (not a space, as in a query).
        {"/files/ab/k-1!1.0+cu126-cp310-cp310-linux_x86_64.whl", "/files/ab/k-1%211.0%2Bcu126-cp310-cp310-linux_x86_64.whl"},
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
    CHECK(parse("/a/%61+b!")->segments == std::vector<std::string>{"a", "a+b!"});  // the full parser keeps '+' too
    // "//" is "/" wherever it is, and only in the path (micropip asks for "/simple//<project>/").
    CHECK(parse("/simple//flash-attn/")->segments == std::vector<std::string>{"simple", "flash-attn", ""});
    CHECK(parse("//simple///flash-attn//")->segments == std::vector<std::string>{"simple", "flash-attn", ""});
    CHECK(parse("/files//abc//x.whl?next=a//b")->segments == std::vector<std::string>{"files", "abc", "x.whl"});
    CHECK(parse("/files//abc//x.whl?next=a//b")->query_value("next") == "a//b");
    CHECK_FALSE(parse("/simple//..//x/"));  // merging does not hide a dot segment
    // Dot segments in plain characters are still refused.
    CHECK_FALSE(parse("/simple/x/.."));
    CHECK_FALSE(parse("/simple/./x"));
}

TEST_CASE("http: query values with control characters are refused as keys are", "[http]") {
    // Issue 14: only keys were checked, so an admin search could carry NUL or a line break into
    // SQL parameters, JSON and log lines.
    const std::pair<const char*, const char*> refused[] = {
        {"/api/v1/projects?q=a%00b", "'q' holds a control character (byte 0x00"},
        {"/api/v1/projects?q=a%0Ab", "'q' holds a control character (byte 0x0A"},
        {"/api/v1/projects?q=a%0Db", "byte 0x0D"},
        {"/api/v1/projects?q=%09", "byte 0x09"},
        {"/api/v1/projects?q=%1B%5B31m", "byte 0x1B"},
        {"/api/v1/projects?q=%7F", "byte 0x7F"},
        {"/api/v1/audit?limit=10&target=x%0Ay", "'target' holds a control character"},
        {"/simple/flash-attn/?format=json%00", "'format'"},
        {"/api/v1/projects?q%0A=x", "control character"},
    };
    for (const auto& [target, reason] : refused) {
        CAPTURE(target);
        const auto parsed = parse(target);
        REQUIRE_FALSE(parsed);
        CHECK(parsed.error().kind == wheelhouse::error_kind::invalid);
        CHECK_THAT(parsed.error().message, Catch::Contains(reason));
        CHECK_THAT(parsed.error().message, Catch::Contains("remove it"));
    }
    // A value that is not UTF-8 would make the JSON that echoes it invalid.
    for (const char* target : {"/api/v1/projects?q=%FF%FE", "/api/v1/projects?q=%C3", "/api/v1/projects?q=%ED%A0%80",
                               "/api/v1/projects?q=%C0%AF"}) {
        CAPTURE(target);
        const auto parsed = parse(target);
        REQUIRE_FALSE(parsed);
        CHECK_THAT(parsed.error().message, Catch::Contains("the query parameter 'q' is not UTF-8"));
    }
    // Everything else a value may hold still passes, decoded.
    const auto fine = parse("/api/v1/projects?q=Flash_Attn%20%2F%20%C3%A9%22%3C&sort=name&page=&flag");
    REQUIRE(fine);
    CHECK(fine->query_value("q") == "Flash_Attn / \xC3\xA9\"<");
    CHECK(fine->query_value("page") == "");
    CHECK(fine->query_value("flag") == "");
}
