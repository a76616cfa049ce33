// PEP 625 sdist filenames. Beside memory safety, for every filename that parses:
// - it is its own canonical spelling: canonical_sdist_filename(name, version) gives it back, its
//   version is written normalised, and its stem is name-version;
// - the project name's normalisation is idempotent.
// For every name refused with "rename it to X" (or "the name to use is X"), X parses, to the
// project and version the refused name meant: the fix the message gives works.

#include <string>

#include "fuzz_support.hpp"
#include "wheelhouse/pep503/name.hpp"
#include "wheelhouse/pep625/sdist_filename.hpp"
#include "wheelhouse/text/quoted.hpp"

namespace {

namespace pep625 = wheelhouse::pep625;

// The filename a refusal tells the uploader to use, if it names one: looked for in the message
// without the refused name, which it quotes last and which may hold any text.
std::string suggested_name(std::string message, std::string_view refused) {
    const auto quoted_name = "the filename is " + wheelhouse::text::quoted(refused);
    if (message.ends_with(quoted_name)) message.resize(message.size() - quoted_name.size());
    for (const std::string marker : {"rename it to ", "the name to use is "}) {
        const auto start = message.find(marker);
        if (start == std::string::npos) continue;
        const auto from = start + marker.size();
        const auto end = message.find_first_of(":;\n", from);
        const auto name = message.substr(from, end == std::string::npos ? std::string::npos : end - from);
        if (name != "its PEP 625 name") return name;
    }
    return {};
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const auto text = wheelhouse::fuzz::as_text(data, size);
    auto parsed = pep625::parse_sdist_filename(text);
    if (!parsed) {
        const auto suggestion = suggested_name(parsed.error().message, text);
        if (suggestion.empty()) return 0;
        auto fixed = pep625::parse_sdist_filename(suggestion);
        WHEELHOUSE_FUZZ_CHECK(fixed.has_value(), std::string(text) + " -> " + suggestion);
        return 0;
    }
    const std::string filename(text);
    WHEELHOUSE_FUZZ_CHECK(pep625::canonical_sdist_filename(parsed->name, parsed->version) == filename, filename);
    WHEELHOUSE_FUZZ_CHECK(parsed->version.to_string() == parsed->version_text, filename);
    WHEELHOUSE_FUZZ_CHECK(parsed->stem() + ".tar.gz" == filename, filename);
    WHEELHOUSE_FUZZ_CHECK(wheelhouse::pep503::normalize(parsed->normalized_name) == parsed->normalized_name, filename);
    WHEELHOUSE_FUZZ_CHECK(pep625::looks_like_sdist(filename), filename);
    return 0;
}
