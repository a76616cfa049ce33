#pragma once
// PEP 825 (Wheel Variants: Package Format) variant metadata: a variant wheel's
// `*.dist-info/variant.json` and the index's `{name}-{version}-variants.json`, which share one
// format. Read strictly, at format version 0.1.1 only (the PEP's schema appendix as of its
// python/peps revision with `variant-schema-0.1.1.json`): an unknown version is refused, as
// the PEP requires of tools. Pure functions.

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "wheelhouse/result.hpp"

namespace wheelhouse::pep825 {

// The one format version this index reads and writes.
inline constexpr std::string_view schema_url = "https://variants-schema.wheelnext.dev/peps/825/v0.1.1.json";
inline constexpr std::string_view format_version = "0.1.1";

// namespace -> feature name -> values (a set: sorted, each once). Empty for the null variant.
using variant_properties = std::map<std::string, std::map<std::string, std::vector<std::string>>>;

struct variant_metadata {
    std::vector<std::string> namespace_priorities;  // default-priorities.namespace, in order
    std::map<std::string, variant_properties> variants;  // by label
};

// What one variant.json may hold. Generous for real variant wheels (a wheel's file maps its one
// label; NVIDIA's sm_arch lists run to tens of values), small enough that a hostile file costs
// little to read, store and serve. README "What a client may send" names each.
struct limits {
    std::uint64_t bytes = 64 * 1024;     // the whole file, whitespace included
    std::size_t labels = 64;             // keys of `variants`
    std::size_t namespaces = 16;         // in default-priorities.namespace, and in one label
    std::size_t total_namespaces = 256;  // over every label
    std::size_t features = 32;           // in one namespace of a label
    std::size_t total_features = 256;    // over every label and namespace
    std::size_t values = 128;            // in one feature's list
    std::size_t total_values = 1024;     // over every label and feature
    std::size_t name_length = 64;        // a label, namespace, feature name or value
};

// `bytes` of variant.json within `within.bytes`, else `invalid` leading with the fix.
result<void> check_size(std::uint64_t bytes, const limits& within = {});

// Parses a variant.json or variants.json in time O(n log n) of its size. Refuses, with the JSON
// path and the rule: a file or a count past `within` (the limit named), invalid JSON, a
// repeated key in any object, an unknown key, a `$schema` other than schema_url (naming the
// version it holds), names and values outside the PEP's character sets, an empty or repeated
// value list, a namespace missing from default-priorities.namespace, properties on the label
// "null". Errors are `invalid`.
result<variant_metadata> parse_variant_metadata(std::string_view json, const limits& within = {});
// Each property as PEP 825 serialises it, "nvidia :: sm_arch :: 90_real", in order.
std::vector<std::string> property_strings(const variant_properties& properties);
// Those joined by ", ", or "no properties".
std::string describe(const variant_properties& properties);

// default-priorities.namespace as a JSON array, and back.
std::string namespaces_json(const std::vector<std::string>& namespaces);
result<std::vector<std::string>> parse_namespaces_json(std::string_view json);

// The namespace priorities of two wheels of one release, merged as PEP 825 allows without
// changing any result: when one list is the other with some namespaces left out (in the same
// order), the longer one; else an `invalid` error naming both.
result<std::vector<std::string>> merge_namespace_priorities(const std::vector<std::string>& release,
                                                            const std::vector<std::string>& wheel);

// The index-level file: schema_url, the namespaces, and every label's properties.
std::string release_variants_json(const variant_metadata& release);

// "{name}-{version}-variants.json", both parts as a wheel filename normalises them:
// ("flash-attn", "2.8.3") -> "flash_attn-2.8.3-variants.json".
std::string release_variants_filename(std::string_view normalized_name, std::string_view normalized_version);

}  // namespace wheelhouse::pep825
