// Range and If-None-Match (http/conditional). The input's first 8 bytes are the
// representation's size (little-endian, kept below 2^40), the first line after them a Range
// value, the second an entity tag and the third an If-None-Match value. Beside memory safety:
// - a partial answer lies inside the representation and is not empty;
// - a range is honoured as RFC 9110 says: "bytes=a-b" written back from a partial answer is
//   that same answer, and the suffix form of it too;
// - If-None-Match matches its own tag, weak or strong, "*", and the tag inside any list.

#include <cstring>
#include <string>

#include "fuzz_support.hpp"
#include "wheelhouse/http/conditional.hpp"

namespace {

namespace http = wheelhouse::http_conditional;

std::string describe(const http::range_decision& d) {
    return std::to_string(static_cast<int>(d.outcome)) + ":" + std::to_string(d.range.first) + "+" +
           std::to_string(d.range.length);
}

bool same(const http::range_decision& a, const http::range_decision& b) {
    return a.outcome == b.outcome && a.range.first == b.range.first && a.range.length == b.range.length;
}

void check_range(std::string_view header, std::uint64_t size) {
    const auto decision = http::decide_range(header, size);
    const std::string what = std::string(header) + " of " + std::to_string(size) + " -> " + describe(decision);
    if (decision.outcome != http::range_outcome::partial) return;
    const auto& range = decision.range;
    WHEELHOUSE_FUZZ_CHECK(range.length > 0 && range.first < size && range.length <= size - range.first, what);
    const std::uint64_t last = range.first + range.length - 1;
    const auto again = http::decide_range("bytes=" + std::to_string(range.first) + "-" + std::to_string(last), size);
    WHEELHOUSE_FUZZ_CHECK(same(again, decision), what + " written back -> " + describe(again));
    if (last == size - 1) {
        const auto suffix = http::decide_range("bytes=-" + std::to_string(range.length), size);
        WHEELHOUSE_FUZZ_CHECK(same(suffix, decision), what + " as a suffix -> " + describe(suffix));
    }
}

void check_if_none_match(std::string_view tag, std::string_view header) {
    (void)http::if_none_match_matches(header, tag);
    // A tag as servers send it: quoted, no comma or whitespace inside.
    if (tag.size() < 2 || tag.front() != '"' || tag.back() != '"' ||
        tag.substr(1, tag.size() - 2).find_first_of("\", \t") != std::string_view::npos)
        return;
    const std::string strong(tag);
    WHEELHOUSE_FUZZ_CHECK(http::if_none_match_matches(strong, strong), strong);
    WHEELHOUSE_FUZZ_CHECK(http::if_none_match_matches("W/" + strong, strong), strong);
    WHEELHOUSE_FUZZ_CHECK(http::if_none_match_matches("*", strong), strong);
    WHEELHOUSE_FUZZ_CHECK(http::if_none_match_matches("\"other\", " + strong + " ,W/\"x\"", strong), strong);
    if (header.find(',') == std::string_view::npos) {
        WHEELHOUSE_FUZZ_CHECK(http::if_none_match_matches(std::string(header) + ", " + strong, strong),
                              std::string(header) + " then " + strong);
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size < 8) return 0;
    std::uint64_t representation = 0;
    std::memcpy(&representation, data, 8);
    representation &= (1ULL << 40) - 1;
    const auto lines = wheelhouse::fuzz::split(wheelhouse::fuzz::as_text(data + 8, size - 8), '\n');
    check_range(lines[0], representation);
    if (lines.size() >= 3) check_if_none_match(lines[1], lines[2]);
    return 0;
}
