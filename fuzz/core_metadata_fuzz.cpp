// METADATA (metadata/core_metadata). Beside memory safety, for text that parses:
// - written back as headers (continuation lines in the specification's "7 spaces and a pipe"
//   form) and the description as the body, it parses to the same fields and description;
// - Name, Version and Metadata-Version are present and not empty, and every field name is a
//   header name: no ':' or whitespace, nothing that would have ended the header block.

#include <string>

#include "fuzz_support.hpp"
#include "wheelhouse/metadata/core_metadata.hpp"

namespace {

using wheelhouse::metadata::core_metadata;

std::string written(const core_metadata& metadata) {
    std::string out;
    for (const auto& [name, value] : metadata.fields) {
        out += name + ": ";
        for (char c : value) {
            out += c;
            if (c == '\n') out += "       |";
        }
        out += '\n';
    }
    // The description as the body: the parser takes the body over a Description header.
    if (!metadata.description.empty()) out += "\n" + metadata.description;
    return out;
}

std::string describe(const core_metadata& metadata) {
    std::string out;
    for (const auto& [name, value] : metadata.fields) out += "[" + name + "]=[" + value + "] ";
    return out + "body=[" + metadata.description + "]";
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const auto text = wheelhouse::fuzz::as_text(data, size);
    auto parsed = wheelhouse::metadata::parse_core_metadata(text);
    if (!parsed) {
        WHEELHOUSE_FUZZ_CHECK(!parsed.error().message.empty(), std::string(text));
        return 0;
    }
    WHEELHOUSE_FUZZ_CHECK(!parsed->name().empty() && !parsed->version().empty() && !parsed->metadata_version().empty(),
                          std::string(text));
    for (const auto& [name, value] : parsed->fields) {
        WHEELHOUSE_FUZZ_CHECK(!name.empty() && name.find_first_of(": \t\r\n") == std::string::npos, name);
    }
    const std::string again_text = written(*parsed);
    auto again = wheelhouse::metadata::parse_core_metadata(again_text);
    WHEELHOUSE_FUZZ_CHECK(again.has_value(), describe(*parsed) + " written as " + again_text + " is refused: " +
                                                 (again ? "" : again.error().message));
    WHEELHOUSE_FUZZ_CHECK(again->fields == parsed->fields && again->description == parsed->description,
                          describe(*parsed) + " reads back as " + describe(*again));
    return 0;
}
