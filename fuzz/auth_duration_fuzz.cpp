// Durations (auth/duration), as `--expires` takes them. Two durations, one per line. Beside
// memory safety:
// - an accepted duration is more than zero and at most 100 years, and its total written in
//   seconds ("<n>s") parses to the same;
// - pairs add up: "<a><b>" is a + b when both parse and the sum is within 100 years, and
//   refused when the sum is not.

#include <chrono>
#include <string>

#include "fuzz_support.hpp"
#include "wheelhouse/auth/duration.hpp"

namespace {

constexpr std::chrono::seconds longest{100LL * 365 * 24 * 60 * 60};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const auto lines = wheelhouse::fuzz::split(wheelhouse::fuzz::as_text(data, size), '\n');
    const auto first = wheelhouse::auth::parse_duration(lines[0]);
    if (first) {
        WHEELHOUSE_FUZZ_CHECK(first->count() > 0 && *first <= longest, std::string(lines[0]));
        const std::string seconds = std::to_string(first->count()) + "s";
        const auto again = wheelhouse::auth::parse_duration(seconds);
        WHEELHOUSE_FUZZ_CHECK(again && *again == *first, std::string(lines[0]) + " vs " + seconds);
    } else {
        WHEELHOUSE_FUZZ_CHECK(!first.error().message.empty(), std::string(lines[0]));
    }
    if (lines.size() < 2) return 0;
    const auto second = wheelhouse::auth::parse_duration(lines[1]);
    if (!first || !second) return 0;
    const std::string joined = std::string(lines[0]) + std::string(lines[1]);
    const auto sum = wheelhouse::auth::parse_duration(joined);
    if (*first + *second <= longest) {
        WHEELHOUSE_FUZZ_CHECK(sum && *sum == *first + *second, joined);
    } else {
        WHEELHOUSE_FUZZ_CHECK(!sum, joined + " is past 100 years");
    }
    return 0;
}
