#pragma once
// PEP 625 / packaging.python.org "Source distribution format": what an sdist's filename says.

#include <string>
#include <string_view>

#include "wheelhouse/pep440/version.hpp"
#include "wheelhouse/result.hpp"

namespace wheelhouse::pep625 {

struct sdist_filename {
    std::string filename;         // as given: "flash_attn-2.8.3.tar.gz"
    std::string name;             // the name part as written: "flash_attn"
    std::string normalized_name;  // PEP 503: "flash-attn"
    std::string version_text;     // as written, which PEP 625 makes the normalised form
    pep440::version version;
    std::string stem() const { return name + "-" + version_text; }  // the archive's top directory
};

// The filename PEP 625 gives project `name` at `version`: the name lower-cased with each run of
// '-', '_' and '.' written '_', then '-', the normalised version, ".tar.gz".
std::string canonical_sdist_filename(std::string_view name, const pep440::version& version);

// True when the name ends in ".tar.gz", ".zip", ".tar.bz2", ".tgz" or ".tar" (any case): a file
// meant as an sdist, whose name parse_sdist_filename judges, not the wheel parser.
bool looks_like_sdist(std::string_view filename) noexcept;

// Parses "{name}-{version}.tar.gz". Only the canonical spelling is taken: a legacy name
// ("Flask-2.0.tar.gz", "flash-attn-2.8.3.tar.gz", "foo-1.0-post1.tar.gz") is refused with the
// name to use. Refused too, with the reason: other archive kinds, path separators, "..",
// control, space or non-ASCII bytes, more than 255 bytes.
result<sdist_filename> parse_sdist_filename(std::string_view filename);

}  // namespace wheelhouse::pep625
