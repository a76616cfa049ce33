#include <catch2/catch.hpp>

#include <chrono>
#include <string>
#include <vector>

#include "wheelhouse/auth/duration.hpp"
#include "wheelhouse/auth/scope.hpp"

using namespace wheelhouse;
using namespace wheelhouse::auth;

TEST_CASE("auth: scopes by name", "[auth]") {
    for (const auto s : {scope::read, scope::upload, scope::admin}) {
        const auto parsed = parse_scope(to_string(s));
        REQUIRE(parsed);
        CHECK(*parsed == s);
    }
    for (const char* bad : {"", "Upload", "write", "admin ", "owner"}) {
        CAPTURE(bad);
        const auto parsed = parse_scope(bad);
        REQUIRE_FALSE(parsed);
        CHECK_THAT(parsed.error().message, Catch::Contains("use read, upload or admin"));
    }
}

TEST_CASE("auth: glob matching with '*' and '?'", "[auth]") {
    struct row {
        const char* pattern;
        const char* text;
        bool matches;
    };
    const row table[] = {
        {"", "", true},
        {"", "a", false},
        {"*", "", true},
        {"*", "anything-at-all", true},
        {"a*", "a", true},
        {"a*b", "ab", true},
        {"a*b", "axxb", true},
        {"a*b", "axxbx", false},
        {"a*b*c", "a-b-b-c", true},
        {"a*b*c", "a-c-b", false},
        {"?", "a", true},
        {"?", "", false},
        {"??", "a", false},
        {"a?c", "abc", true},
        {"a?c", "ac", false},
        {"*-cu12*", "torch-cu128", true},
        {"*-cu12*", "cu128", false},
        {"**", "x", true},
        {"*a*a*a*a*b", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", false},
        {"[ab]", "a", false},  // no character classes: '[' is literal
        {"[ab]", "[ab]", true},
    };
    for (const auto& [pattern, text, matches] : table) {
        CAPTURE(pattern, text);
        CHECK(glob_match(pattern, text) == matches);
    }
}

TEST_CASE("auth: project patterns are checked and normalised like names", "[auth]") {
    struct row {
        const char* pattern;
        const char* normalized;  // nullptr: rejected with `message`
        const char* message;
    };
    const row table[] = {
        {"flash-attn", "flash-attn", ""},
        {"Flash_Attn", "flash-attn", ""},
        {"zope.interface", "zope-interface", ""},
        {"Nunchaku_*", "nunchaku-*", ""},
        {"nunchaku-*", "nunchaku-*", ""},
        {"*-CU12*", "*-cu12*", ""},
        {"sage__attention?", "sage-attention?", ""},
        {"*", "*", ""},
        {"", nullptr, "empty project pattern"},
        {"flash attn", nullptr, "contains ' '"},
        {"flash/attn", nullptr, "contains '/'"},
        {"flash[ab]", nullptr, "contains '['"},
        {"flash\x01", nullptr, "contains '\\x01'"},
        {"-flash", nullptr, "not a valid project name"},
        {"flash-", nullptr, "not a valid project name"},
        {"_*", nullptr, "starts or ends with a separator"},
        {"*.", nullptr, "starts or ends with a separator"},
    };
    for (const auto& [pattern, normalized, message] : table) {
        CAPTURE(pattern);
        const auto parsed = normalize_project_pattern(pattern);
        if (normalized) {
            REQUIRE(parsed);
            CHECK(*parsed == normalized);
        } else {
            REQUIRE_FALSE(parsed);
            CHECK(parsed.error().kind == error_kind::invalid);
            CHECK_THAT(parsed.error().message, Catch::Contains(message));
        }
    }
}

TEST_CASE("auth: what a grant permits, by scope and project", "[auth]") {
    struct row {
        scope granted;
        std::vector<std::string> patterns;
        scope needed;
        const char* project;
        bool permitted;
    };
    using enum scope;
    const std::vector<row> table = {
        // scope order: admin > upload > read, on any project when unrestricted
        {admin, {}, admin, "flash-attn", true},
        {admin, {}, upload, "flash-attn", true},
        {admin, {}, read, "flash-attn", true},
        {upload, {}, admin, "flash-attn", false},
        {upload, {}, upload, "flash-attn", true},
        {upload, {}, read, "flash-attn", true},
        {read, {}, admin, "flash-attn", false},
        {read, {}, upload, "flash-attn", false},
        {read, {}, read, "flash-attn", true},
        {admin, {}, admin, "", true},
        {upload, {}, upload, "", true},
        {read, {}, read, "", true},
        // an exact project
        {upload, {"flash-attn"}, upload, "flash-attn", true},
        {upload, {"flash-attn"}, upload, "flash-attn-3", false},
        {upload, {"flash-attn"}, upload, "Flash_Attn", true},  // normalised before matching
        {upload, {"Flash_Attn"}, upload, "flash-attn", true},  // so is the pattern
        {upload, {"flash-attn"}, read, "flash-attn", true},
        {upload, {"flash-attn"}, admin, "flash-attn", false},
        {upload, {"flash-attn"}, upload, "sageattention", false},
        {upload, {"flash-attn"}, upload, "", false},  // not a project action: a limited grant does not reach it
        {read, {"flash-attn"}, read, "", false},
        // globs
        {upload, {"nunchaku-*"}, upload, "nunchaku-cu128", true},
        {upload, {"nunchaku-*"}, upload, "nunchaku_cu128", true},
        {upload, {"nunchaku-*"}, upload, "nunchaku", false},
        {upload, {"nunchaku*"}, upload, "nunchaku", true},
        {upload, {"*-cu12*"}, upload, "torch-cu128", true},
        {upload, {"*-cu12*"}, upload, "xformers-cu126-extra", true},
        {upload, {"*-cu12*"}, upload, "xformers-cu118", false},
        {upload, {"sage?ttention"}, upload, "sageattention", true},
        {upload, {"sage?ttention"}, upload, "sagettention", false},
        {upload, {"*"}, upload, "anything", true},
        {upload, {"*"}, upload, "", false},
        // several patterns: any one is enough
        {upload, {"flash-attn", "nunchaku-*"}, upload, "nunchaku-x", true},
        {upload, {"flash-attn", "nunchaku-*"}, upload, "flash-attn", true},
        {upload, {"flash-attn", "nunchaku-*"}, upload, "xformers", false},
        {read, {"flash-attn", "nunchaku-*"}, upload, "flash-attn", false},
        {admin, {"cupy-*"}, admin, "cupy-cuda12x", true},
        {admin, {"cupy-*"}, admin, "numpy", false},
    };
    REQUIRE(table.size() >= 30);
    for (const auto& [granted, patterns, needed, project, permitted] : table) {
        CAPTURE(to_string(granted), patterns, to_string(needed), project);
        const token_grant grant{"ci-token", granted, patterns};
        CHECK(permits(grant, needed, project) == permitted);
    }
}

TEST_CASE("auth: token lifetimes from the command line", "[auth]") {
    using std::chrono::seconds;
    constexpr long day = 86400;
    struct row {
        const char* text;
        long expected;  // 0: rejected with `message`
        const char* message;
    };
    const row table[] = {
        {"90d", 90 * day, ""},
        {"12h", 12 * 3600, ""},
        {"30m", 30 * 60, ""},
        {"45s", 45, ""},
        {"2w", 14 * day, ""},
        {"1y", 365 * day, ""},
        {"1d12h", day + 12 * 3600, ""},
        {"1h30m", 5400, ""},
        {"100y", 100 * 365 * day, ""},
        {"007d", 7 * day, ""},
        {"", 0, "empty duration"},
        {"90", 0, "has no unit after 90: use s, m, h, d, w or y (90d is 90 days)"},
        {"d", 0, "needs a number where 'd' is"},
        {"90x", 0, "unknown unit 'x' in duration '90x'"},
        {"90D", 0, "unknown unit 'D'"},
        {"90 d", 0, "unknown unit ' '"},
        {" 90d", 0, "needs a number"},
        {"-5d", 0, "needs a number"},
        {"+5d", 0, "needs a number"},
        {"1.5d", 0, "unknown unit '.'"},
        {"0d", 0, "is zero"},
        {"0h0m", 0, "is zero"},
        {"101y", 0, "too long: at most 100y"},
        {"36501d", 0, "too long"},
        {"99y99y", 0, "too long"},
        {"99999999999999999999d", 0, "too long"},
        {"9223372036854775807s", 0, "too long"},
        {"1d12", 0, "has no unit after 12"},
    };
    for (const auto& [text, expected, message] : table) {
        CAPTURE(text);
        const auto parsed = parse_duration(text);
        if (expected != 0) {
            INFO((parsed ? std::string() : parsed.error().message));
            REQUIRE(parsed);
            CHECK(*parsed == seconds(expected));
        } else {
            REQUIRE_FALSE(parsed);
            CHECK(parsed.error().kind == error_kind::invalid);
            CHECK_THAT(parsed.error().message, Catch::Contains(message));
        }
    }
}
