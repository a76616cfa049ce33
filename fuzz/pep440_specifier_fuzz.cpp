// PEP 440 specifier sets: the first line a set, up to three versions on the lines after it.
// Beside memory safety:
// - a refusal has a message that names the clause, without control bytes;
// - the canonical form parses back to a set that prints the same (parse∘print), and that holds
//   the same versions, whatever the pre-release setting;
// - the set holds a version exactly when every clause does, with the set's pre-release rule;
// - letting pre-releases in never takes a version out, and a final release ignores the setting;
// - '==' and '!=' on the same version are complements once pre-releases are let in.

#include <optional>
#include <string>
#include <vector>

#include "fuzz_support.hpp"
#include "wheelhouse/pep440/specifier.hpp"

namespace {

using namespace wheelhouse::pep440;

bool has_control_byte(const std::string& text) {
    for (unsigned char c : text) {
        if (c < 0x20 || c == 0x7F) return true;
    }
    return false;
}

void check_clauses(const specifier_set& set, const version& candidate, const std::string& names) {
    bool admit = false;
    for (const auto& clause : set.clauses) admit = admit || clause.admits_prereleases();
    bool every = true;
    for (const auto& clause : set.clauses) every = every && clause.contains(candidate, admit);
    if (candidate.is_prerelease() && !admit) every = false;
    WHEELHOUSE_FUZZ_CHECK(set.contains(candidate) == every, names + ": the set disagrees with its clauses");

    for (const auto& clause : set.clauses) {
        if (clause.op != comparison::equal && clause.op != comparison::not_equal) continue;
        specifier flipped = clause;
        flipped.op = clause.op == comparison::equal ? comparison::not_equal : comparison::equal;
        WHEELHOUSE_FUZZ_CHECK(clause.contains(candidate, true) != flipped.contains(candidate, true),
                              names + ": " + clause.to_string() + " and " + flipped.to_string() + " both answer the same");
    }
}

void check_version(const specifier_set& set, const specifier_set& reparsed, const version& candidate) {
    const std::string names = "'" + set.to_string() + "' and " + candidate.to_string();
    for (const std::optional<bool> admit : {std::optional<bool>(), std::optional<bool>(true), std::optional<bool>(false)}) {
        WHEELHOUSE_FUZZ_CHECK(set.contains(candidate, admit) == reparsed.contains(candidate, admit),
                              names + ": the canonical form holds other versions");
    }
    const bool with = set.contains(candidate, true);
    const bool without = set.contains(candidate, false);
    WHEELHOUSE_FUZZ_CHECK(with || !without, names + ": letting pre-releases in took a version out");
    if (!candidate.is_prerelease()) {
        WHEELHOUSE_FUZZ_CHECK(with == without && with == set.contains(candidate),
                              names + ": a final release depends on the pre-release setting");
    }
    check_clauses(set, candidate, names);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const auto lines = wheelhouse::fuzz::split(wheelhouse::fuzz::as_text(data, size), '\n');
    auto set = parse_specifier_set(lines[0]);
    if (!set) {
        const auto& message = set.error().message;
        WHEELHOUSE_FUZZ_CHECK(!message.empty() && !has_control_byte(message), std::string(lines[0]) + " -> " + message);
        return 0;
    }
    const std::string printed = set->to_string();
    auto reparsed = parse_specifier_set(printed);
    WHEELHOUSE_FUZZ_CHECK(reparsed.has_value(), std::string(lines[0]) + " printed as " + printed + ", which does not parse");
    WHEELHOUSE_FUZZ_CHECK(reparsed->to_string() == printed, printed + " reprinted as " + reparsed->to_string());
    for (std::size_t i = 1; i < lines.size() && i <= 3; ++i) {
        if (auto candidate = parse(lines[i])) check_version(*set, *reparsed, *candidate);
    }
    return 0;
}
