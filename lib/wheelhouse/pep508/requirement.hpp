#pragma once
// PEP 508 dependency specifiers (packaging.python.org "Dependency specifiers"): what a
// Requires-Dist line holds, such as `torch[cuda]>=2.8,<3; sys_platform == "linux"` or
// `kernels @ https://example.org/kernels-1.0-py3-none-any.whl`.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "wheelhouse/pep440/specifier.hpp"
#include "wheelhouse/pep508/marker.hpp"
#include "wheelhouse/result.hpp"

namespace wheelhouse::pep508 {

struct requirement {
    std::string name;                 // as written; a valid project name
    std::vector<std::string> extras;  // as written, in order
    pep440::specifier_set specifiers; // empty when there are none, or a URL is given
    std::optional<std::string> url;   // after '@'
    std::optional<pep508::marker> marker;

    // Name and extras normalised (PEP 503, PEP 685; extras sorted, without repeats), then
    // the specifier set's canonical form or " @ URL", then "; " and the marker's canonical form
    // (" ; " after a URL, which PEP 508 needs a space to end): `torch[cuda]<3,>=2.8; ...`.
    std::string to_string() const;
};

// The PEP 508 grammar, as packaging 23.0's Requirement reads it, with these refusals where
// packaging 23.0 is more lenient: a name or extra ending in '_', empty parentheses and a
// trailing ',' in the specifier list (PEP 508's grammar has none of them, and packaging 21.3,
// which pip 23 still uses, refuses them), a control character anywhere, and what
// parse_marker refuses. URLs must be absolute RFC 3986 URIs with a host, or file:// URLs.
// The error quotes the requirement and says what to write.
result<requirement> parse_requirement(std::string_view text);

}  // namespace wheelhouse::pep508
