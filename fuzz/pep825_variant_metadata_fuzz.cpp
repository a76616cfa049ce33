// PEP 825 variant.json (pep825/variant_metadata). Beside memory safety, for text that parses:
// - every name and value keeps to the PEP's characters, no value list is empty or repeats a
//   value, every namespace used is in the priorities, and "null" has no properties;
// - it keeps within every one of pep825::limits: bytes, labels, namespaces, features and values
//   per list and in all, and the length of each name and value;
// - the release file made from it (release_variants_json) parses back to the same metadata;
// - namespace priorities merge with themselves into themselves.
// A refusal's message is printable ASCII: what it quotes is escaped.

#include <algorithm>
#include <string>

#include "fuzz_support.hpp"
#include "wheelhouse/pep825/variant_metadata.hpp"

namespace {

namespace pep825 = wheelhouse::pep825;

bool only(const std::string& text, bool dot_allowed) {
    return !text.empty() && std::all_of(text.begin(), text.end(), [&](char c) {
        return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || c == '_' || (dot_allowed && c == '.');
    });
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const auto text = wheelhouse::fuzz::as_text(data, size);
    auto parsed = pep825::parse_variant_metadata(text);
    if (!parsed) {
        const auto& message = parsed.error().message;
        const bool printable = std::all_of(message.begin(), message.end(), [](char c) {
            return c == '\n' || (c >= 0x20 && c < 0x7F);
        });
        WHEELHOUSE_FUZZ_CHECK(!message.empty() && printable, std::string(text) + " is refused with: " + message);
        return 0;
    }
    const pep825::limits within;
    const auto short_enough = [&](const std::string& name) { return name.size() <= within.name_length; };
    WHEELHOUSE_FUZZ_CHECK(text.size() <= within.bytes, std::string(text));
    const auto& namespaces = parsed->namespace_priorities;
    WHEELHOUSE_FUZZ_CHECK(!namespaces.empty() && namespaces.size() <= within.namespaces, std::string(text));
    for (const auto& space : namespaces) WHEELHOUSE_FUZZ_CHECK(only(space, false) && short_enough(space), space);
    WHEELHOUSE_FUZZ_CHECK(parsed->variants.size() <= within.labels, std::string(text));
    std::size_t spaces_in_all = 0, features_in_all = 0, values_in_all = 0;
    for (const auto& [label, properties] : parsed->variants) {
        WHEELHOUSE_FUZZ_CHECK(only(label, true) && short_enough(label), label);
        WHEELHOUSE_FUZZ_CHECK(label != "null" || properties.empty(), std::string(text));
        WHEELHOUSE_FUZZ_CHECK(properties.size() <= within.namespaces, label);
        spaces_in_all += properties.size();
        for (const auto& [space, features] : properties) {
            WHEELHOUSE_FUZZ_CHECK(std::find(namespaces.begin(), namespaces.end(), space) != namespaces.end(), space);
            WHEELHOUSE_FUZZ_CHECK(features.size() <= within.features, space);
            features_in_all += features.size();
            for (const auto& [feature, values] : features) {
                WHEELHOUSE_FUZZ_CHECK(only(feature, false) && short_enough(feature) && !values.empty(), feature);
                WHEELHOUSE_FUZZ_CHECK(values.size() <= within.values, feature);
                WHEELHOUSE_FUZZ_CHECK(std::is_sorted(values.begin(), values.end()) &&
                                          std::adjacent_find(values.begin(), values.end()) == values.end(),
                                      feature);
                values_in_all += values.size();
                for (const auto& value : values) WHEELHOUSE_FUZZ_CHECK(only(value, true) && short_enough(value), value);
            }
        }
    }
    WHEELHOUSE_FUZZ_CHECK(spaces_in_all <= within.total_namespaces && features_in_all <= within.total_features &&
                              values_in_all <= within.total_values,
                          std::string(text));
    const auto release = pep825::release_variants_json(*parsed);
    auto back = pep825::parse_variant_metadata(release);
    WHEELHOUSE_FUZZ_CHECK(back.has_value(), release + " is refused: " + (back ? "" : back.error().message));
    WHEELHOUSE_FUZZ_CHECK(back->namespace_priorities == namespaces && back->variants == parsed->variants, release);
    auto merged = pep825::merge_namespace_priorities(namespaces, namespaces);
    WHEELHOUSE_FUZZ_CHECK(merged && *merged == namespaces, std::string(text));
    return 0;
}
