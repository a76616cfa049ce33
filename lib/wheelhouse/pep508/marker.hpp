#pragma once
// PEP 508 environment markers (packaging.python.org "Dependency specifiers"): the condition
// after ';' in a requirement, such as `python_version >= "3.9" and extra == "gpu"`. Parsed
// into a tree with `and` binding tighter than `or`, and printed canonically. Not evaluated:
// the index only needs to know that every client can read one.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "wheelhouse/result.hpp"

namespace wheelhouse::pep508 {

// Either side of a comparison: one of the PEP 508 variables, by its canonical name
// ("python_version", "sys_platform", "extra", ...), or a literal string.
struct marker_operand {
    bool is_variable = false;
    std::string text;  // the variable's canonical name, or the literal's value without quotes

    friend bool operator==(const marker_operand&, const marker_operand&) = default;
};

struct marker_comparison {
    marker_operand left;
    std::string op;  // "==", "!=", "<=", "<", ">=", ">", "~=", "===", "in" or "not in"
    marker_operand right;

    friend bool operator==(const marker_comparison&, const marker_comparison&) = default;
};

struct marker {
    enum class kind { comparison, all_of, any_of };  // a leaf, an `and` chain, an `or` chain
    kind what = kind::comparison;
    marker_comparison leaf;         // for kind::comparison
    std::vector<marker> operands;   // two or more, for all_of and any_of; never of their own kind

    // `python_version >= "3.9" and (sys_platform == "linux" or sys_platform == "darwin")`:
    // variables by their PEP 508 names, literals in double quotes (single when they hold one),
    // extra names normalised (PEP 685), single spaces, and parentheses only where `or` sits
    // inside `and`.
    std::string to_string() const;

    friend bool operator==(const marker&, const marker&) = default;
};

// The PEP 508 grammar: comparisons of a variable or quoted string with another, joined by
// `and`/`or` and grouped by parentheses. Accepts the names packaging also reads (PEP 345's
// `os.name`, `sys.platform`, `platform.version`, `platform.machine`,
// `platform.python_implementation`, and `python_implementation`) and prints their PEP 508
// names. Refused besides the grammar's faults: an unknown variable, a backslash or control
// character in a string (PEP 508's strings have neither; packaging would interpret escapes),
// and `~=` or `===` with a literal on the right that is no version, which no client can
// evaluate. The error names the place and leads with what to write there.
result<marker> parse_marker(std::string_view text);

}  // namespace wheelhouse::pep508
