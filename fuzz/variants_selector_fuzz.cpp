// Variant selectors ("cu130-torch2.10-sm89"). The first line is a selector, the second a local
// label standing for a file's variant. Beside memory safety, for a selector that parses:
// - its canonical spelling parses, has the same constraints and is its own canonical spelling,
//   and each of its other spellings (the 301s the index answers) parses to it;
// - it speaks to the machine, and a build made exactly for it fits it (satisfies);
// - fitting is monotone: a file that fits a selector fits it with any one word left out.
// For a selector refused because it disagrees with itself ("use A or B: ..."), each spelling
// the refusal offers parses (issue 28).
// For the label, whether or not the selector parses: every selector the variants API could list
// for its build (decode -> candidate selectors -> canonical spelling -> parse) reads back as
// itself and lists the build (the same round trip as tests/unit's property test over tests/data).

#include <span>
#include <string>
#include <vector>

#include "fuzz_support.hpp"
#include "wheelhouse/variants/build_variant.hpp"
#include "wheelhouse/variants/selector.hpp"
#include "wheelhouse/catalog/variant_view.hpp"

namespace {

using wheelhouse::variants::build_variant;
using wheelhouse::variants::selector;

void check_canonical(std::string_view text, const selector& parsed) {
    const std::string canonical = parsed.canonical();
    auto again = wheelhouse::variants::parse_selector(canonical);
    WHEELHOUSE_FUZZ_CHECK(again.has_value(), std::string(text) + " has the canonical spelling " + canonical +
                                                 ", which is refused: " + (again ? "" : again.error().message));
    WHEELHOUSE_FUZZ_CHECK(again->constraints == parsed.constraints, std::string(text) + " vs " + canonical);
    WHEELHOUSE_FUZZ_CHECK(again->canonical() == canonical, std::string(text) + " vs " + canonical);
    for (const auto& spelling : wheelhouse::variants::other_spellings(parsed)) {
        auto other = wheelhouse::variants::parse_selector(spelling);
        WHEELHOUSE_FUZZ_CHECK(other && other->canonical() == canonical, canonical + " spelled " + spelling);
    }
}

// Each selector with one of `wanted`'s words left out.
std::vector<selector> looser(const selector& wanted) {
    std::vector<selector> out;
    auto without = [&](auto clear) {
        selector copy = wanted;
        clear(copy.constraints);
        if (!(copy.constraints == wanted.constraints)) out.push_back(std::move(copy));
    };
    without([](build_variant& v) { v.cuda.reset(); });
    without([](build_variant& v) { v.rocm.reset(); });
    without([](build_variant& v) { v.cpu = false; });
    without([](build_variant& v) { v.xpu = false; });
    without([](build_variant& v) { v.torch.reset(); });
    without([](build_variant& v) { v.sm.reset(); });
    without([](build_variant& v) { v.cxx11abi.reset(); });
    return out;
}

void check_fits_looser(const build_variant& file, const selector& wanted, std::string_view label) {
    for (const auto& loose : looser(wanted)) {
        WHEELHOUSE_FUZZ_CHECK(wheelhouse::variants::satisfies(file, loose),
                              std::string(label) + " fits " + wanted.canonical() + " but not " + loose.canonical());
    }
}

void check_decoded_label_selector_round_trip(const build_variant& file, std::string_view label) {
    wheelhouse::catalog::file_record record;
    record.filename = "x-1-py3-none-any.whl";
    record.normalized_version = "1";
    record.variant = file;
    for (const auto& candidate : wheelhouse::catalog::candidate_selectors(file)) {
        const std::string name = candidate.canonical();
        auto again = wheelhouse::variants::parse_selector(name);
        WHEELHOUSE_FUZZ_CHECK(again && again->constraints == candidate.constraints,
                              std::string(label) + " is offered " + name + ", which reads as something else");
        const auto listed = wheelhouse::catalog::listed_files(std::span(&record, 1), *again);
        WHEELHOUSE_FUZZ_CHECK(listed.size() == 1, std::string(label) + " is offered " + name + ", which lists nothing");
    }
}

// The spellings a refusal leads with: "use A (what torch.__version__ says) or B: ...".
void check_offered_spellings(std::string_view text, const std::string& message) {
    if (!message.starts_with("use ")) return;
    const auto colon = message.find(": ");
    WHEELHOUSE_FUZZ_CHECK(colon != std::string::npos, std::string(text) + ": " + message);
    std::string fixes = message.substr(4, colon - 4);
    constexpr std::string_view note = " (what torch.__version__ says)";
    if (const auto at = fixes.find(note); at != std::string::npos) fixes.erase(at, note.size());
    for (auto rest = std::string_view(fixes); !rest.empty();) {
        const auto or_at = rest.find(" or ");
        const auto spelling = rest.substr(0, or_at);
        auto offered = wheelhouse::variants::parse_selector(spelling);
        WHEELHOUSE_FUZZ_CHECK(offered && offered->canonical() == spelling,
                              std::string(text) + " is refused offering " + std::string(spelling) + ": " + message);
        rest.remove_prefix(or_at == std::string_view::npos ? rest.size() : or_at + 4);
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const auto lines = wheelhouse::fuzz::split(wheelhouse::fuzz::as_text(data, size), '\n');
    if (lines.size() > 1) check_decoded_label_selector_round_trip(wheelhouse::variants::decode_local_label(lines[1]), lines[1]);
    auto parsed = wheelhouse::variants::parse_selector(lines[0]);
    if (!parsed) {
        WHEELHOUSE_FUZZ_CHECK(!parsed.error().message.empty(), std::string(lines[0]));
        check_offered_spellings(lines[0], parsed.error().message);
        return 0;
    }
    check_canonical(lines[0], *parsed);
    WHEELHOUSE_FUZZ_CHECK(wheelhouse::variants::speaks_to_machine(parsed->constraints), std::string(lines[0]));
    WHEELHOUSE_FUZZ_CHECK(wheelhouse::variants::satisfies(parsed->constraints, *parsed),
                          std::string(lines[0]) + ": its own machine does not fit it");
    if (lines.size() > 1) {
        const build_variant file = wheelhouse::variants::decode_local_label(lines[1]);
        if (wheelhouse::variants::satisfies(file, *parsed)) check_fits_looser(file, *parsed, lines[1]);
        (void)wheelhouse::variants::specificity(file, *parsed);
    }
    return 0;
}
