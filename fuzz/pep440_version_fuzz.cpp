// PEP 440 versions: up to three versions, one per line. Beside memory safety:
// - the normalised form parses back to an equal version that prints the same (parse∘print);
// - to_string() is public_string() plus '+' and local_string();
// - compare() is a weak order: reflexive, antisymmetric, transitive on every triple, and equal
//   exactly when the normalised forms agree once trailing ".0" release parts are dropped.

#include <compare>
#include <optional>
#include <string>
#include <vector>

#include "fuzz_support.hpp"
#include "wheelhouse/pep440/version.hpp"

namespace {

using wheelhouse::pep440::version;

std::string describe(const version& v) { return v.to_string(); }

// The normalised form with trailing zero release parts dropped: "1.0.0+x" and "1+x" agree.
std::string without_trailing_zeros(version v) {
    while (v.release.size() > 1 && v.release.back() == 0) v.release.pop_back();
    return v.to_string();
}

void check_round_trip(std::string_view text, const version& parsed) {
    const std::string printed = parsed.to_string();
    auto again = wheelhouse::pep440::parse(printed);
    WHEELHOUSE_FUZZ_CHECK(again.has_value(), std::string(text) + " printed as " + printed + " which does not parse");
    WHEELHOUSE_FUZZ_CHECK(again->to_string() == printed, printed + " reprinted as " + again->to_string());
    WHEELHOUSE_FUZZ_CHECK(*again == parsed, printed + " is not equal to its own reparse");
    WHEELHOUSE_FUZZ_CHECK(again->epoch == parsed.epoch && again->release == parsed.release && again->pre == parsed.pre &&
                              again->post == parsed.post && again->dev == parsed.dev && again->local == parsed.local,
                          printed + " reparses to other parts");
    const std::string expected =
        parsed.local.empty() ? parsed.public_string() : parsed.public_string() + "+" + parsed.local_string();
    WHEELHOUSE_FUZZ_CHECK(printed == expected, printed + " vs public+local " + expected);
}

std::weak_ordering reversed(std::weak_ordering order) { return 0 <=> order; }

void check_pair(const version& a, const version& b) {
    const auto ab = wheelhouse::pep440::compare(a, b);
    const auto ba = wheelhouse::pep440::compare(b, a);
    WHEELHOUSE_FUZZ_CHECK(ab == reversed(ba), describe(a) + " vs " + describe(b) + ": compare is not antisymmetric");
    const bool same = without_trailing_zeros(a) == without_trailing_zeros(b);
    WHEELHOUSE_FUZZ_CHECK((ab == 0) == same, describe(a) + " vs " + describe(b) + ": equality disagrees with normal form");
}

void check_triple(const version& a, const version& b, const version& c) {
    const auto ab = wheelhouse::pep440::compare(a, b);
    const auto bc = wheelhouse::pep440::compare(b, c);
    const auto ac = wheelhouse::pep440::compare(a, c);
    const std::string names = describe(a) + ", " + describe(b) + ", " + describe(c);
    if (ab <= 0 && bc <= 0) WHEELHOUSE_FUZZ_CHECK(ac <= 0, names + ": <= is not transitive");
    if (ab < 0 && bc <= 0) WHEELHOUSE_FUZZ_CHECK(ac < 0, names + ": < is not transitive");
    if (ab == 0 && bc == 0) WHEELHOUSE_FUZZ_CHECK(ac == 0, names + ": == is not transitive");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    std::vector<version> versions;
    for (auto line : wheelhouse::fuzz::split(wheelhouse::fuzz::as_text(data, size), '\n')) {
        if (versions.size() == 3) break;
        auto parsed = wheelhouse::pep440::parse(line);
        if (!parsed) {
            WHEELHOUSE_FUZZ_CHECK(!parsed.error().message.empty(), std::string(line) + " refused without a message");
            continue;
        }
        check_round_trip(line, *parsed);
        WHEELHOUSE_FUZZ_CHECK(wheelhouse::pep440::compare(*parsed, *parsed) == 0, std::string(line) + " != itself");
        versions.push_back(std::move(*parsed));
    }
    for (std::size_t i = 0; i < versions.size(); ++i) {
        for (std::size_t j = i + 1; j < versions.size(); ++j) check_pair(versions[i], versions[j]);
    }
    if (versions.size() == 3) {
        // Every order of the three, so each transitivity chain is tried.
        const std::size_t orders[6][3] = {{0, 1, 2}, {0, 2, 1}, {1, 0, 2}, {1, 2, 0}, {2, 0, 1}, {2, 1, 0}};
        for (const auto& o : orders) check_triple(versions[o[0]], versions[o[1]], versions[o[2]]);
    }
    return 0;
}
