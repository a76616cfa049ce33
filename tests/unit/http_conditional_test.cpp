#include <catch2/catch.hpp>

#include "wheelhouse/http/conditional.hpp"

using namespace wheelhouse::http_conditional;

TEST_CASE("http: If-None-Match compares entity tags weakly", "[http]") {
    CHECK(if_none_match_matches("\"abc\"", "\"abc\""));
    CHECK(if_none_match_matches("W/\"abc\"", "\"abc\""));
    CHECK(if_none_match_matches("\"x\", \"abc\"", "\"abc\""));
    CHECK(if_none_match_matches("*", "\"abc\""));
    CHECK_FALSE(if_none_match_matches("\"abd\"", "\"abc\""));
    CHECK_FALSE(if_none_match_matches("abc", "\"abc\""));
    CHECK_FALSE(if_none_match_matches("", "\"abc\""));
}

TEST_CASE("http: Range headers against a 1000-byte file", "[http]") {
    struct row {
        const char* header;
        range_outcome outcome;
        std::uint64_t first, length;
    };
    const row table[] = {
        {"bytes=0-99", range_outcome::partial, 0, 100},
        {"bytes=100-", range_outcome::partial, 100, 900},
        {"bytes=-100", range_outcome::partial, 900, 100},
        {"bytes=-5000", range_outcome::partial, 0, 1000},
        {"bytes=990-5000", range_outcome::partial, 990, 10},
        {"bytes=999-999", range_outcome::partial, 999, 1},
        {"bytes=1000-", range_outcome::unsatisfiable, 0, 0},
        {"bytes=-0", range_outcome::unsatisfiable, 0, 0},
        {"bytes=5-2", range_outcome::whole, 0, 0},
        {"bytes=0-1,5-9", range_outcome::whole, 0, 0},
        {"items=0-1", range_outcome::whole, 0, 0},
        {"bytes=abc", range_outcome::whole, 0, 0},
        {"bytes=-", range_outcome::whole, 0, 0},
        {"", range_outcome::whole, 0, 0},
    };
    for (const auto& [header, outcome, first, length] : table) {
        CAPTURE(header);
        const auto decision = decide_range(header, 1000);
        CHECK(decision.outcome == outcome);
        if (outcome == range_outcome::partial) {
            CHECK(decision.range.first == first);
            CHECK(decision.range.length == length);
        }
    }
}

TEST_CASE("http: Content-Range of a 206 names the first and last byte and the size", "[http]") {
    CHECK(content_range({0, 100}, 1000) == "bytes 0-99/1000");
    CHECK(content_range({999, 1}, 1000) == "bytes 999-999/1000");
    CHECK(content_range(decide_range("bytes=-10", 1000).range, 1000) == "bytes 990-999/1000");
}
