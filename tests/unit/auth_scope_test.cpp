#include <catch2/catch.hpp>

#include <chrono>
#include <string_view>
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
        // Issue 14: a '*' or '?' in the text is an ordinary character, which a pattern's '*'
        // may take; before, the text's '*' was matched as a literal first and never let go.
        {"*", "*a", true},
        {"*b", "*ab", true},
        {"*", "**", true},
        {"*a", "*a", true},
        {"**a", "*a", true},
        {"?", "*", true},
        {"*?", "*", true},
        {"a*", "a*", true},
        {"a*b", "a*b", true},
        {"a?b", "a*b", true},
        {"*?*", "?", true},
        {"a*", "*a", false},
        {"a", "*", false},
        {"*a", "*b", false},
        {"?*b", "*ab*", false},
        {"*a*b", "*a*ab", true},
    };
    for (const auto& [pattern, text, matches] : table) {
        CAPTURE(pattern, text);
        CHECK(glob_match(pattern, text) == matches);
    }
}

namespace {

// The definition, run as written (exponential, so only for short strings).
bool glob_reference(std::string_view pattern, std::string_view text) {
    if (pattern.empty()) return text.empty();
    if (pattern.front() == '*') {
        return glob_reference(pattern.substr(1), text) || (!text.empty() && glob_reference(pattern, text.substr(1)));
    }
    if (text.empty()) return false;
    return (pattern.front() == '?' || pattern.front() == text.front()) && glob_reference(pattern.substr(1), text.substr(1));
}

// Every string of up to `longest` characters from `alphabet`.
std::vector<std::string> all_strings(std::string_view alphabet, std::size_t longest) {
    std::vector<std::string> out{""};
    for (std::size_t start = 0, length = 1; length <= longest; ++length) {
        const std::size_t end = out.size();
        for (std::size_t i = start; i < end; ++i) {
            for (char c : alphabet) out.push_back(out[i] + c);
        }
        start = end;
    }
    return out;
}

}  // namespace

TEST_CASE("auth: glob matching agrees with the definition on every short pattern and text", "[auth]") {
    const auto patterns = all_strings("ab*?", 4);
    const auto texts = all_strings("ab*?", 5);
    std::size_t matched = 0;
    for (const auto& pattern : patterns) {
        for (const auto& text : texts) {
            const bool expected = glob_reference(pattern, text);
            if (glob_match(pattern, text) != expected) FAIL("pattern '" << pattern << "', text '" << text << "'");
            matched += expected ? 1 : 0;
        }
    }
    CHECK(matched > 10000);  // the enumeration holds both answers in number
}

TEST_CASE("auth: glob matching past 64 pattern characters and on hostile input", "[auth]") {
    // Longer than one word of states: the carry between words counts.
    const std::string long_pattern = std::string(70, '?') + "*" + std::string(70, 'a') + "*?";
    CHECK(glob_match(long_pattern, std::string(70, 'x') + std::string(70, 'a') + "b"));
    CHECK(glob_match(long_pattern, std::string(75, 'x') + std::string(72, 'a') + "yz"));
    CHECK_FALSE(glob_match(long_pattern, std::string(70, 'x') + std::string(70, 'a')));
    CHECK_FALSE(glob_match(long_pattern, std::string(69, 'x') + std::string(70, 'a') + "b"));
    CHECK(glob_match(std::string(200, 'a'), std::string(200, 'a')));
    CHECK_FALSE(glob_match(std::string(200, 'a'), std::string(199, 'a') + "b"));
    // What sends a backtracking matcher into exponential (or quadratic) time answers in one pass.
    CHECK_FALSE(glob_match("*a*a*a*a*a*a*a*a*a*a*a*a*b", std::string(100000, 'a')));
    CHECK(glob_match("*a*a*a*a*a*a*a*a*a*a*a*a*b", std::string(100000, 'a') + "b"));
    CHECK_FALSE(glob_match(std::string(1000, '*') + "b", std::string(100000, 'a')));
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
        // names as a request spells them are normalised (PEP 503) before they are matched
        {read, {"flash-attn"}, read, "FLASH.ATTN", true},
        {read, {"flash-attn"}, read, "flash__attn", true},
        {read, {"nunchaku-*"}, read, "Nunchaku_Torch.Cu128", true},
        {read, {"*-cu12*"}, read, "XFORMERS_CU128", true},
        {read, {"flash-attn*"}, read, "flash-attn-", false},  // no project has that name
        {read, {"*"}, read, "flash attn", false},
        {read, {"*"}, read, "../flash-attn", false},
        {read, {"*"}, read, "-flash-attn", false},
        {read, {"*"}, read, "flash-attn\n", false},
        {read, {"*"}, read, "fl\xC3\xA4sh", false},
        {read, {}, read, "flash attn", true},  // an unlimited grant has no names to match
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
