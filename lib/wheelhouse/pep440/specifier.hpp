#pragma once
// PEP 440 version specifiers (packaging.python.org "Version specifiers"): one clause such as
// ">=3.9" or "==2.8.*", and the comma-separated sets that Requires-Python and PEP 508
// requirements hold. Parse every spelling packaging 23.0 accepts (within ASCII), print a
// canonical form, and answer `contains` exactly as packaging's Specifier/SpecifierSet do,
// pre-releases included.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "wheelhouse/pep440/version.hpp"
#include "wheelhouse/result.hpp"

namespace wheelhouse::pep440 {

enum class comparison {
    compatible,     // ~=
    equal,          // ==
    not_equal,      // !=
    less_equal,     // <=
    greater_equal,  // >=
    less,           // <
    greater,        // >
    arbitrary,      // ===, a plain (case-insensitive) string match
};

std::string_view to_string(comparison op) noexcept;

struct specifier {
    comparison op = comparison::greater_equal;
    // The version as written, without surrounding whitespace: "3.9", "2.8.*", or for ===
    // any text.
    std::string written;
    // The parsed version: for a prefix match ("==2.8.*") the part before ".*"; unset only for
    // an === whose text is no PEP 440 version.
    std::optional<version> target;
    bool prefix_match = false;  // "==X.*" or "!=X.*"

    // op + the normalised version: ">=3.9", "==2.8.*", "~=1.4.0rc1"; === keeps its text.
    std::string to_string() const;
    // Whether this clause lets pre-releases in by itself: an inclusive operator (==, >=,
    // <=, ~=, ===) on a pre-release, as packaging's Specifier.prereleases says.
    bool admits_prereleases() const noexcept;
    // packaging's Specifier.contains: `prereleases` unset means admits_prereleases().
    bool contains(const version& candidate, std::optional<bool> prereleases = std::nullopt) const;
};

// One clause: an operator, optional whitespace, a version. The error says which rule the
// clause breaks (unknown operator, local label or ".*" where they are not allowed, "~="
// with one release number, the version's own fault) and leads with how to write it.
result<specifier> parse_specifier(std::string_view text);

struct specifier_set {
    std::vector<specifier> clauses;  // in the order written

    // The clauses' canonical forms, sorted and without repeats, joined by ",": two sets that
    // print the same hold the same clauses. Empty for the empty set (which holds everything).
    std::string to_string() const;
    bool empty() const noexcept { return clauses.empty(); }
    // packaging's SpecifierSet.contains: every clause holds the version. Pre-releases are
    // let in when `prereleases` says so or, unset, when some clause admits them; the empty set
    // admits none unless told to.
    bool contains(const version& candidate, std::optional<bool> prereleases = std::nullopt) const;
};

// Clauses separated by ',' as packaging's SpecifierSet reads them: whitespace around each is
// ignored and empty clauses are skipped (">=3.9,", which PyPI and every pip accept). The
// error names the clause that is wrong.
result<specifier_set> parse_specifier_set(std::string_view text);

}  // namespace wheelhouse::pep440
