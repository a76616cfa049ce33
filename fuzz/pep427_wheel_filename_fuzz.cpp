// PEP 427 wheel filenames. Beside memory safety, for every filename that parses:
// - it reassembles from its parts into a filename that parses to the same parts (parse∘print);
// - spelled with the normalised name ('_' for each run of separators) and the normalised version,
//   it still parses, to the same project and an equal version;
// - a PEP 825 variant label survives both;
// - every tag is a valid tag, the project name's normalisation is idempotent, and the variant
//   decoder takes the result.

#include <string>

#include "fuzz_support.hpp"
#include "wheelhouse/pep427/wheel_filename.hpp"
#include "wheelhouse/pep503/name.hpp"
#include "wheelhouse/variants/build_variant.hpp"

namespace {

using wheelhouse::pep427::wheel_filename;

std::string joined(const std::vector<std::string>& tags) {
    std::string out;
    for (const auto& tag : tags) out += (out.empty() ? "" : ".") + tag;
    return out;
}

std::string assemble(std::string_view name, std::string_view version, const wheel_filename& parts) {
    std::string out = std::string(name) + "-" + std::string(version);
    if (parts.build) out += "-" + parts.build->text;
    out += "-" + joined(parts.python_tags) + "-" + joined(parts.abi_tags) + "-" + joined(parts.platform_tags);
    if (parts.variant_label) out += "-" + *parts.variant_label;
    return out + ".whl";
}

void check_same_parts(const wheel_filename& a, const wheel_filename& b) {
    const std::string names = a.filename + " and " + b.filename;
    WHEELHOUSE_FUZZ_CHECK(a.normalized_name == b.normalized_name, names + ": other project");
    WHEELHOUSE_FUZZ_CHECK(a.version == b.version, names + ": other version");
    WHEELHOUSE_FUZZ_CHECK(a.build.has_value() == b.build.has_value(), names + ": build tag differs");
    if (a.build) {
        WHEELHOUSE_FUZZ_CHECK(a.build->number == b.build->number && a.build->suffix == b.build->suffix,
                              names + ": build tag differs");
    }
    WHEELHOUSE_FUZZ_CHECK(a.python_tags == b.python_tags && a.abi_tags == b.abi_tags && a.platform_tags == b.platform_tags,
                          names + ": tags differ");
    WHEELHOUSE_FUZZ_CHECK(a.variant_label == b.variant_label, names + ": variant label differs");
}

std::string wheel_name_escape(std::string_view normalized) {
    std::string out(normalized);
    for (char& c : out) {
        if (c == '-') c = '_';
    }
    return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const auto text = wheelhouse::fuzz::as_text(data, size);
    const std::string normalized = wheelhouse::pep503::normalize(text);
    WHEELHOUSE_FUZZ_CHECK(wheelhouse::pep503::normalize(normalized) == normalized, std::string(text));

    auto parsed = wheelhouse::pep427::parse_wheel_filename(text);
    if (!parsed) {
        WHEELHOUSE_FUZZ_CHECK(!parsed.error().message.empty(), std::string(text));
        return 0;
    }
    const wheel_filename& wheel = *parsed;
    WHEELHOUSE_FUZZ_CHECK(wheel.filename == text, std::string(text));
    for (const auto* tags : {&wheel.python_tags, &wheel.abi_tags, &wheel.platform_tags}) {
        WHEELHOUSE_FUZZ_CHECK(!tags->empty(), std::string(text) + ": an empty tag set");
        for (const auto& tag : *tags) WHEELHOUSE_FUZZ_CHECK(wheelhouse::pep427::is_valid_tag(tag), std::string(text) + ": " + tag);
    }

    const std::string reassembled = assemble(wheel.name, wheel.version_text, wheel);
    auto again = wheelhouse::pep427::parse_wheel_filename(reassembled);
    WHEELHOUSE_FUZZ_CHECK(again.has_value(), std::string(text) + " reassembled as " + reassembled + " is refused: " +
                                                 (again ? "" : again.error().message));
    check_same_parts(wheel, *again);

    const std::string canonical =
        assemble(wheel_name_escape(wheel.normalized_name), wheel.version.to_string(), wheel);
    if (canonical.size() <= 255 && canonical.find("..") == std::string::npos) {
        auto normal = wheelhouse::pep427::parse_wheel_filename(canonical);
        WHEELHOUSE_FUZZ_CHECK(normal.has_value(), std::string(text) + " normalised as " + canonical + " is refused: " +
                                                      (normal ? "" : normal.error().message));
        check_same_parts(wheel, *normal);
    }
    (void)wheelhouse::variants::decode(wheel);
    return 0;
}
