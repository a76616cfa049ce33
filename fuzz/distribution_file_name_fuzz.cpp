// The one vocabulary of file names (distribution/file_name.hpp). Beside memory safety:
// - every name that parses names a project, which is PEP 503 normalised, and the name's
//   suffix says its kind: ".metadata" for the metadata kinds, "-variants.json" for a release's;
// - the row's filename is the name itself, or it without ".metadata", and parses again as the
//   archive it names, to the same project: what the access check reads is what ingest reads;
// - every refusal is `invalid` and printable (its detail on the lines after the reason).

#include <string>

#include "fuzz_support.hpp"
#include "wheelhouse/distribution/file_name.hpp"
#include "wheelhouse/pep503/name.hpp"

namespace distribution = wheelhouse::distribution;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const auto text = wheelhouse::fuzz::as_text(data, size);
    const std::string name(text);
    auto named = distribution::parse_file_name(text);
    if (!named) {
        WHEELHOUSE_FUZZ_CHECK(named.error().kind == wheelhouse::error_kind::invalid, name);
        for (const char c : named.error().message) {
            const auto byte = static_cast<unsigned char>(c);
            WHEELHOUSE_FUZZ_CHECK(c == '\n' || (byte >= 0x20 && byte < 0x7f), named.error().message);
        }
        return 0;
    }
    const auto& project = named->project();
    WHEELHOUSE_FUZZ_CHECK(!project.empty() && wheelhouse::pep503::normalize(project) == project, name);
    WHEELHOUSE_FUZZ_CHECK(named->is_metadata() == name.ends_with(".metadata"), name);
    const bool release = named->kind == distribution::file_kind::release_variants;
    WHEELHOUSE_FUZZ_CHECK(release == name.ends_with("-variants.json"), name);
    const auto& row = named->row_filename();
    WHEELHOUSE_FUZZ_CHECK(named->is_metadata() ? row + ".metadata" == name : row == name, name);
    if (release) return 0;
    auto archive = distribution::parse_archive_name(row);
    WHEELHOUSE_FUZZ_CHECK(archive.has_value(), name);
    WHEELHOUSE_FUZZ_CHECK(distribution::project_of(*archive) == project, name);
    return 0;
}
