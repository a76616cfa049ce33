#include "wheelhouse/pep825/variant_metadata.hpp"

#include <boost/json.hpp>

#include <algorithm>
#include <limits>
#include <optional>
#include <set>

#include "wheelhouse/error_text.hpp"
#include "wheelhouse/text/json_object.hpp"
#include "wheelhouse/text/quoted.hpp"

namespace wheelhouse::pep825 {
namespace {

namespace json = boost::json;
using text::quoted;

// ---- the structure ----

bool is_name_character(char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || c == '_'; }
bool is_value_character(char c) { return is_name_character(c) || c == '.'; }
bool all_of(std::string_view text, bool (*allowed)(char)) {
    return !text.empty() && std::all_of(text.begin(), text.end(), allowed);
}

std::string path_of(std::string_view parent, std::string_view key) {
    return std::string(parent) + (parent.empty() ? "" : ".") + std::string(key);
}

// A count past its limit, refused leading with the fix: "list at most 128 values per feature: …".
error past_limit(std::string_view fix, std::size_t limit, std::string_view things, std::string_view path,
                 std::string_view holds, std::size_t count) {
    return invalid(std::string(fix) + " at most " + std::to_string(limit) + " " + std::string(things) + ": " +
                   std::string(path) + " " + std::string(holds) + " " + std::to_string(count));
}

// What a document has used of the limits that count over all of it.
struct totals {
    const limits& within;
    std::size_t namespaces = 0;
    std::size_t features = 0;
    std::size_t values = 0;
};

// Adds `count` to `total`, refused past `limit` naming `path`, the part that went past it.
result<void> add_to_total(std::size_t& total, std::size_t count, std::size_t limit, std::string_view things,
                          std::string_view path) {
    total += count;
    if (total <= limit) return {};
    return past_limit("use", limit, std::string(things) + " in all", path, "brings the count to", total);
}

// `path` is the name's parent: the name's own bytes appear only quoted until they are checked.
result<void> check_name(std::string_view path, std::string_view what, std::string_view name,
                        bool (*allowed)(char), std::string_view characters, std::size_t max_length) {
    if (!all_of(name, allowed)) {
        return invalid(std::string(path) + ": the " + std::string(what) + " " + quoted(name) + " must be non-empty and of " +
                       std::string(characters) + " only");
    }
    if (name.size() > max_length) {
        return invalid("use " + std::string(what) + "s of at most " + std::to_string(max_length) + " characters: " +
                       std::string(path) + " has one of " + std::to_string(name.size()) + " (" + quoted(name, 24) + ")");
    }
    return {};
}

constexpr std::string_view name_characters = "0-9, a-z and '_'";
constexpr std::string_view value_characters = "0-9, a-z, '_' and '.'";

// The only keys `object` may have are `allowed`; those in `required` must be there.
result<void> check_keys(const json::object& object, std::string_view path, std::initializer_list<std::string_view> allowed,
                        std::initializer_list<std::string_view> required) {
    for (const auto& member : object) {
        const std::string_view key(member.key().data(), member.key().size());
        if (std::find(allowed.begin(), allowed.end(), key) == allowed.end()) {
            return invalid(path_of(path, quoted(key)) + " is not a key of format " + std::string(format_version));
        }
    }
    for (auto key : required) {
        if (!object.contains(key)) return invalid(path_of(path, key) + " is missing; format " +
                                                  std::string(format_version) + " requires it");
    }
    return {};
}

result<const json::object*> object_at(const json::object& parent, std::string_view key, std::string_view path) {
    const auto& value = parent.at(key);
    if (!value.is_object()) return invalid(path_of(path, key) + " must be an object");
    return &value.as_object();
}

// How one list of names or values is read.
struct list_rule {
    std::string_view what;  // "value": what one item is called
    bool (*allowed)(char);
    std::string_view characters;
    std::size_t max_items;
    std::string_view per;  // "per feature": what max_items counts in
    std::size_t max_length;
};

// A list of unique strings, each checked by `rule`, in its order. Repeats are found through a
// set, so a list costs O(n log n) of its length.
result<std::vector<std::string>> string_list(const json::value& value, std::string_view path, const list_rule& rule) {
    const std::string what(rule.what);
    if (!value.is_array()) return invalid(std::string(path) + " must be a list of " + what + "s");
    const auto& array = value.as_array();
    if (array.empty()) return invalid(std::string(path) + " is empty; list at least one " + what);
    if (array.size() > rule.max_items) {
        return past_limit("list", rule.max_items, what + "s " + std::string(rule.per), path, "lists", array.size());
    }
    std::vector<std::string> items;
    items.reserve(array.size());
    std::set<std::string_view> seen;
    for (const auto& item : array) {
        if (!item.is_string()) return invalid(std::string(path) + " must hold only strings");
        const std::string_view text(item.as_string().data(), item.as_string().size());
        if (auto checked = check_name(path, what, text, rule.allowed, rule.characters, rule.max_length); !checked) {
            return checked.error();
        }
        if (!seen.insert(text).second) return invalid(std::string(path) + " lists " + quoted(text) + " twice");
        items.emplace_back(text);
    }
    return items;
}

list_rule namespace_list(const limits& within) {
    return {"namespace", is_name_character, name_characters, within.namespaces, "in default-priorities",
            within.name_length};
}

result<std::string> check_schema(const json::value& value) {
    if (!value.is_string()) return invalid("$schema must be a string (the format's schema URL)");
    const std::string url(value.as_string());
    if (url == schema_url) return url;
    // "…/peps/825/vX.Y.Z.json": name the version, which says what to rebuild with.
    constexpr std::string_view family = "https://variants-schema.wheelnext.dev/peps/825/v";
    if (url.starts_with(family) && url.ends_with(".json")) {
        const auto version = url.substr(family.size(), url.size() - family.size() - 5);
        return invalid("variant metadata format " + quoted(version) + " is not supported; this index reads " +
                       std::string(format_version) + " ($schema " + std::string(schema_url) + ")");
    }
    return invalid("$schema " + quoted(url) + " is no PEP 825 format this index knows; it reads " +
                   std::string(format_version) + " ($schema " + std::string(schema_url) + ")");
}

// One namespace's features, each a value list, counted into `used`.
result<std::map<std::string, std::vector<std::string>>> read_features(const json::value& value, const std::string& path,
                                                                      totals& used) {
    const auto& within = used.within;
    if (!value.is_object()) return invalid(path + " must be an object of features");
    const auto& object = value.as_object();
    if (object.size() > within.features) {
        return past_limit("list", within.features, "features per namespace", path, "has", object.size());
    }
    if (auto added = add_to_total(used.features, object.size(), within.total_features, "features", path); !added) {
        return added.error();
    }
    const list_rule values{"value", is_value_character, value_characters, within.values, "per feature",
                           within.name_length};
    std::map<std::string, std::vector<std::string>> features;
    for (const auto& feature : object) {
        const std::string_view name(feature.key().data(), feature.key().size());
        if (auto checked = check_name(path, "feature name", name, is_name_character, name_characters, within.name_length);
            !checked) {
            return checked.error();
        }
        const auto feature_path = path_of(path, name);
        auto listed = string_list(feature.value(), feature_path, values);
        if (!listed) return listed.error();
        if (auto added = add_to_total(used.values, listed->size(), within.total_values, "values", feature_path); !added) {
            return added.error();
        }
        std::sort(listed->begin(), listed->end());
        features.emplace(name, std::move(*listed));
    }
    return features;
}

result<variant_properties> read_properties(const json::value& value, const std::string& path, totals& used) {
    const auto& within = used.within;
    if (!value.is_object()) return invalid(path + " must be an object of namespaces");
    const auto& object = value.as_object();
    if (object.size() > within.namespaces) {
        return past_limit("use", within.namespaces, "namespaces per label", path, "has", object.size());
    }
    if (auto added = add_to_total(used.namespaces, object.size(), within.total_namespaces, "namespaces", path); !added) {
        return added.error();
    }
    variant_properties properties;
    for (const auto& space : object) {
        const std::string_view name(space.key().data(), space.key().size());
        if (auto checked = check_name(path, "namespace", name, is_name_character, name_characters, within.name_length);
            !checked) {
            return checked.error();
        }
        auto features = read_features(space.value(), path_of(path, name), used);
        if (!features) return features.error();
        properties.emplace(name, std::move(*features));
    }
    return properties;
}

result<void> check_label(const std::string& label, const variant_properties& properties,
                         const std::set<std::string_view>& namespaces) {
    if (label == "null" && !properties.empty()) {
        return invalid("variants.null has properties; the null variant has none (PEP 825 reserves the label)");
    }
    for (const auto& [space, features] : properties) {
        if (!namespaces.contains(space)) {
            return invalid("variants." + label + " uses namespace " + quoted(space) +
                           ", which default-priorities.namespace does not list; add it there");
        }
    }
    return {};
}

result<std::vector<std::string>> read_priorities(const json::object& top, const limits& within) {
    auto priorities = object_at(top, "default-priorities", "");
    if (!priorities) return priorities.error();
    if (auto keys = check_keys(**priorities, "default-priorities", {"namespace"}, {"namespace"}); !keys) return keys.error();
    return string_list((*priorities)->at("namespace"), "default-priorities.namespace", namespace_list(within));
}

result<std::map<std::string, variant_properties>> read_variants(const json::object& top,
                                                                const std::vector<std::string>& priorities,
                                                                const limits& within) {
    auto variants = object_at(top, "variants", "");
    if (!variants) return variants.error();
    if ((*variants)->size() > within.labels) {
        return past_limit("map", within.labels, "labels", "variants", "has", (*variants)->size());
    }
    const std::set<std::string_view> listed(priorities.begin(), priorities.end());
    totals used{within};
    std::map<std::string, variant_properties> out;
    for (const auto& member : **variants) {
        const std::string label(member.key());
        // Checked before anything names "variants.<label>": a message must not carry its bytes raw.
        if (auto checked = check_name("variants", "label", label, is_value_character, value_characters, within.name_length);
            !checked) {
            return checked.error();
        }
        auto properties = read_properties(member.value(), "variants." + label, used);
        if (!properties) return properties.error();
        if (auto checked = check_label(label, *properties, listed); !checked) return checked.error();
        out.emplace(label, std::move(*properties));
    }
    return out;
}

json::object properties_object(const variant_properties& properties) {
    json::object out;
    for (const auto& [space, features] : properties) {
        json::object feature_object;
        for (const auto& [feature, values] : features) {
            json::array list;
            for (const auto& value : values) list.emplace_back(value);
            feature_object[feature] = std::move(list);
        }
        out[space] = std::move(feature_object);
    }
    return out;
}

json::array string_array(const std::vector<std::string>& items) {
    json::array out;
    for (const auto& item : items) out.emplace_back(item);
    return out;
}

bool is_subsequence(const std::vector<std::string>& part, const std::vector<std::string>& whole) {
    auto at = whole.begin();
    for (const auto& item : part) {
        at = std::find(at, whole.end(), item);
        if (at == whole.end()) return false;
        ++at;
    }
    return true;
}

}  // namespace

result<void> check_size(std::uint64_t bytes, const limits& within) {
    if (bytes <= within.bytes) return {};
    return invalid("keep variant.json within " + std::to_string(within.bytes) + " bytes: it is " +
                   std::to_string(bytes) + " (whitespace counts)");
}

result<variant_metadata> parse_variant_metadata(std::string_view text, const limits& within) {
    if (auto fits = check_size(text.size(), within); !fits) return fits.error();
    // boost::json keeps one value of a repeated key; text::parse_json_object refuses it.
    auto top = text::parse_json_object(text);
    if (!top) return top.error();
    if (auto keys = check_keys(*top, "", {"$schema", "default-priorities", "variants"},
                               {"$schema", "default-priorities", "variants"});
        !keys) {
        return keys.error();
    }
    if (auto schema = check_schema(top->at("$schema")); !schema) return schema.error();
    auto priorities = read_priorities(*top, within);
    if (!priorities) return priorities.error();
    auto variants = read_variants(*top, *priorities, within);
    if (!variants) return variants.error();
    return variant_metadata{std::move(*priorities), std::move(*variants)};
}

std::vector<std::string> property_strings(const variant_properties& properties) {
    std::vector<std::string> out;
    for (const auto& [space, features] : properties) {
        for (const auto& [feature, values] : features) {
            for (const auto& value : values) out.push_back(space + " :: " + feature + " :: " + value);
        }
    }
    return out;
}

std::string describe(const variant_properties& properties) {
    std::string out;
    for (const auto& property : property_strings(properties)) out += (out.empty() ? "" : ", ") + property;
    return out.empty() ? "no properties" : out;
}

std::string namespaces_json(const std::vector<std::string>& namespaces) {
    return json::serialize(string_array(namespaces));
}

result<std::vector<std::string>> parse_namespaces_json(std::string_view text) {
    boost::system::error_code failure;
    auto value = json::parse(json::string_view(text.data(), text.size()), failure);
    if (failure) return invalid("namespace priorities are not valid JSON (" + failure.message() + ")");
    // The catalog's own copy of a list checked at ingest: held to no count or length, so rows
    // stored before the limits read back.
    constexpr auto unbounded = std::numeric_limits<std::size_t>::max();
    const list_rule stored{"namespace", is_name_character, name_characters, unbounded, "", unbounded};
    return string_list(value, "default-priorities.namespace", stored);
}

result<std::vector<std::string>> merge_namespace_priorities(const std::vector<std::string>& release,
                                                            const std::vector<std::string>& wheel) {
    if (is_subsequence(wheel, release)) return release;
    if (is_subsequence(release, wheel)) return wheel;
    return invalid("rebuild with the release's namespace priorities: default-priorities.namespace conflicts",
                   "this wheel's variant.json orders the namespaces " + namespaces_json(wheel) +
                       ", the release's other variant wheels " + namespaces_json(release) +
                       "; one list must be the other with namespaces left out, in the same order");
}

std::string release_variants_json(const variant_metadata& release) {
    json::object variants;
    for (const auto& [label, properties] : release.variants) variants[label] = properties_object(properties);
    json::object out;
    out["$schema"] = std::string(schema_url);
    out["default-priorities"] = json::object{{"namespace", string_array(release.namespace_priorities)}};
    out["variants"] = std::move(variants);
    return json::serialize(out);
}

std::string release_variants_filename(std::string_view normalized_name, std::string_view normalized_version) {
    std::string name(normalized_name);
    std::replace(name.begin(), name.end(), '-', '_');
    std::string version(normalized_version);
    std::replace(version.begin(), version.end(), '-', '_');
    return name + "-" + version + "-variants.json";
}

}  // namespace wheelhouse::pep825
