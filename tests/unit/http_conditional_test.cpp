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

TEST_CASE("http: HTTP-dates are written as IMF-fixdate and read in all three forms", "[http]") {
    using namespace wheelhouse::http_conditional;
    CHECK(http_date(784111777) == "Sun, 06 Nov 1994 08:49:37 GMT");
    CHECK(http_date(0) == "Thu, 01 Jan 1970 00:00:00 GMT");
    CHECK(parse_http_date("Sun, 06 Nov 1994 08:49:37 GMT") == 784111777);
    CHECK(parse_http_date("Sunday, 06-Nov-94 08:49:37 GMT") == 784111777);
    CHECK(parse_http_date("Sun Nov  6 08:49:37 1994") == 784111777);
    CHECK(parse_http_date(" Sun, 06 Nov 1994 08:49:37 GMT ") == 784111777);
    for (const auto* bad : {"", "yesterday", "Sun, 06 Nov 1994 08:49:37", "Sun, 06 Nov 1994 08:49:37 GMT junk",
                            "Sun, 06 Nov 1994 08:49:37 GMT, Mon, 07 Nov 1994 08:49:37 GMT", "1994-11-06T08:49:37Z"}) {
        CAPTURE(bad);
        CHECK_FALSE(parse_http_date(bad).has_value());
    }
    for (const std::int64_t instant : {0LL, 784111777LL, 1795000000LL, 4102444800LL}) {
        CHECK(parse_http_date(http_date(instant)) == instant);
    }
}

TEST_CASE("http: If-Modified-Since is current at or after the last change, and ignored when not a date",
          "[http]") {
    using namespace wheelhouse::http_conditional;
    CHECK(unmodified_since("Sun, 06 Nov 1994 08:49:37 GMT", 784111777));
    CHECK(unmodified_since("Sun, 06 Nov 1994 08:49:38 GMT", 784111777));
    CHECK_FALSE(unmodified_since("Sun, 06 Nov 1994 08:49:36 GMT", 784111777));
    CHECK_FALSE(unmodified_since("", 784111777));
    CHECK_FALSE(unmodified_since("not a date", 0));
}
