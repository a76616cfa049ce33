#include <catch2/catch.hpp>

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "wheelhouse/pep825/variant_metadata.hpp"

using namespace wheelhouse::pep825;

namespace {

// A variant.json of format 0.1.1 with `priorities` and `variants` spliced in as written.
std::string document(std::string_view priorities, std::string_view variants) {
    return std::string(R"({"$schema": ")") + std::string(schema_url) + R"(", "default-priorities": )" +
           std::string(priorities) + R"(, "variants": )" + std::string(variants) + "}";
}

const std::string cuda_wheel = document(
    R"({"namespace": ["nvidia"]})",
    R"({"cu128_sm90": {"nvidia": {"cuda_version_lower_bound": ["12.8"], "sm_arch": ["90_real", "100_real"]}}})");

std::string refusal_with(const std::string& text, const limits& within) {
    auto parsed = parse_variant_metadata(text, within);
    REQUIRE_FALSE(parsed.has_value());
    CHECK(parsed.error().kind == wheelhouse::error_kind::invalid);
    return parsed.error().message;
}

std::string refusal(const std::string& text) { return refusal_with(text, {}); }

}  // namespace

TEST_CASE("pep825: a wheel's variant.json is read, values as sorted sets", "[pep825]") {
    auto parsed = parse_variant_metadata(cuda_wheel);
    if (!parsed) FAIL(parsed.error().message);
    CHECK(parsed->namespace_priorities == std::vector<std::string>{"nvidia"});
    REQUIRE(parsed->variants.size() == 1);
    const auto& properties = parsed->variants.at("cu128_sm90");
    CHECK(properties.at("nvidia").at("sm_arch") == std::vector<std::string>{"100_real", "90_real"});
    CHECK(describe(properties) ==
          "nvidia :: cuda_version_lower_bound :: 12.8, nvidia :: sm_arch :: 100_real, nvidia :: sm_arch :: 90_real");
}

TEST_CASE("pep825: the null variant has no properties", "[pep825]") {
    auto parsed = parse_variant_metadata(document(R"({"namespace": ["nvidia"]})", R"({"null": {}})"));
    REQUIRE(parsed.has_value());
    CHECK(parsed->variants.at("null").empty());
    CHECK(describe(parsed->variants.at("null")) == "no properties");
    CHECK_THAT(refusal(document(R"({"namespace": ["nvidia"]})", R"({"null": {"nvidia": {"sm_arch": ["90_real"]}}})")),
               Catch::Contains("variants.null has properties"));
}

TEST_CASE("pep825: an unknown format version is refused, naming it", "[pep825]") {
    std::string older = cuda_wheel;
    older.replace(older.find("v0.1.1"), 6, "v0.1.0");
    CHECK_THAT(refusal(older), Catch::Contains("format '0.1.0' is not supported; this index reads 0.1.1"));
    std::string other = cuda_wheel;
    other.replace(other.find("https://variants-schema"), 8, "http://x");
    CHECK_THAT(refusal(other), Catch::Contains("is no PEP 825 format this index knows"));
    CHECK_THAT(refusal(R"({"default-priorities": {"namespace": ["a"]}, "variants": {}})"),
               Catch::Contains("$schema is missing"));
}

TEST_CASE("pep825: keys outside format 0.1.1 are refused", "[pep825]") {
    CHECK_THAT(refusal(document(R"({"namespace": ["nvidia"], "feature": {"nvidia": ["sm_arch"]}})", "{}")),
               Catch::Contains("default-priorities.'feature' is not a key of format 0.1.1"));
    std::string extra = cuda_wheel;
    extra.insert(1, R"("providers": {}, )");
    CHECK_THAT(refusal(extra), Catch::Contains("'providers' is not a key of format 0.1.1"));
    CHECK_THAT(refusal(document("{}", "{}")), Catch::Contains("default-priorities.namespace is missing"));
}

TEST_CASE("pep825: names and values keep to the PEP's characters", "[pep825]") {
    const auto with = [](std::string_view variants) { return document(R"({"namespace": ["nvidia"]})", variants); };
    CHECK_THAT(refusal(with(R"({"cu128": {"nvidia": {"SM": ["90"]}}})")), Catch::Contains("the feature name 'SM'"));
    CHECK_THAT(refusal(with(R"({"cu128": {"nvidia": {"sm_arch": ["9-0"]}}})")), Catch::Contains("the value '9-0'"));
    CHECK_THAT(refusal(with(R"({"cu128": {"nvidia": {"sm_arch": [""]}}})")), Catch::Contains("the value ''"));
    CHECK_THAT(refusal(with(R"({"CU128": {}})")), Catch::Contains("the label 'CU128'"));
    CHECK_THAT(refusal(document(R"({"namespace": ["NVIDIA"]})", "{}")), Catch::Contains("the namespace 'NVIDIA'"));
    CHECK_THAT(refusal(with(R"({"cu128": {"nvidia": {"sm_arch": [90]}}})")), Catch::Contains("must hold only strings"));
}

TEST_CASE("pep825: empty and repeated lists are refused", "[pep825]") {
    const auto with = [](std::string_view variants) { return document(R"({"namespace": ["nvidia"]})", variants); };
    CHECK_THAT(refusal(with(R"({"cu128": {"nvidia": {"sm_arch": []}}})")),
               Catch::Contains("variants.cu128.nvidia.sm_arch is empty"));
    CHECK_THAT(refusal(with(R"({"cu128": {"nvidia": {"sm_arch": ["90_real", "90_real"]}}})")),
               Catch::Contains("lists '90_real' twice"));
    CHECK_THAT(refusal(document(R"({"namespace": []})", "{}")), Catch::Contains("default-priorities.namespace is empty"));
    CHECK_THAT(refusal(document(R"({"namespace": ["a", "a"]})", "{}")), Catch::Contains("lists 'a' twice"));
}

TEST_CASE("pep825: every namespace used is in the priorities", "[pep825]") {
    CHECK_THAT(refusal(document(R"({"namespace": ["x86_64"]})", R"({"cu128": {"nvidia": {"sm_arch": ["90"]}}})")),
               Catch::Contains("uses namespace 'nvidia', which default-priorities.namespace does not list"));
}

TEST_CASE("pep825: a key given twice in one object is refused", "[pep825]") {
    CHECK_THAT(refusal(document(R"({"namespace": ["nvidia"], "namespace": ["x"]})", "{}")),
               Catch::Contains("key 'namespace' appears twice"));
    CHECK_THAT(refusal(document(R"({"namespace": ["nvidia"]})",
                                R"({"cu128": {"nvidia": {"sm_arch": ["90"], "sm_arch": ["80"]}}})")),
               Catch::Contains("key 'sm_arch' appears twice"));
    CHECK_THAT(refusal(document(R"({"namespace": ["nvidia"]})", R"({"a": {}, "a": {}})")),
               Catch::Contains("key 'a' appears twice"));
    // The same key in two objects is no repeat.
    CHECK(parse_variant_metadata(document(R"({"namespace": ["nvidia"]})",
                                          R"({"a": {"nvidia": {"x": ["1"]}}, "b": {"nvidia": {"x": ["2"]}}})"))
              .has_value());
}

TEST_CASE("pep825: what is not a JSON object is refused", "[pep825]") {
    CHECK_THAT(refusal(""), Catch::Contains("not valid JSON"));
    CHECK_THAT(refusal("{"), Catch::Contains("not valid JSON"));
    CHECK_THAT(refusal("[]"), Catch::Contains("the top level is not a JSON object"));
    CHECK_THAT(refusal(cuda_wheel + "x"), Catch::Contains("not valid JSON"));
}

TEST_CASE("pep825: namespace priorities merge only when one list is part of the other", "[pep825]") {
    using list = std::vector<std::string>;
    CHECK(*merge_namespace_priorities({}, list{"nvidia"}) == list{"nvidia"});
    CHECK(*merge_namespace_priorities(list{"nvidia", "x86_64"}, list{"x86_64"}) == list{"nvidia", "x86_64"});
    CHECK(*merge_namespace_priorities(list{"x86_64"}, list{"nvidia", "x86_64"}) == list{"nvidia", "x86_64"});
    auto conflict = merge_namespace_priorities(list{"nvidia", "x86_64"}, list{"x86_64", "nvidia"});
    REQUIRE_FALSE(conflict.has_value());
    CHECK_THAT(conflict.error().message, Catch::Contains(R"(["x86_64","nvidia"])"));
    CHECK_THAT(conflict.error().message, Catch::Contains(R"(["nvidia","x86_64"])"));
    CHECK_FALSE(merge_namespace_priorities(list{"a", "b"}, list{"a", "c"}).has_value());
}

TEST_CASE("pep825: the release file reads back as what it was made from", "[pep825]") {
    variant_metadata release;
    release.namespace_priorities = {"nvidia"};
    release.variants["null"] = {};
    release.variants["cu128_sm90"] = parse_variant_metadata(cuda_wheel)->variants.at("cu128_sm90");
    const auto text = release_variants_json(release);
    CHECK(text.starts_with(R"({"$schema":")" + std::string(schema_url) + "\""));
    auto back = parse_variant_metadata(text);
    if (!back) FAIL(back.error().message);
    CHECK(back->namespace_priorities == release.namespace_priorities);
    CHECK(back->variants == release.variants);
    CHECK(release_variants_filename("flash-attn", "2.8.3") == "flash_attn-2.8.3-variants.json");
    CHECK(release_variants_filename("numpy", "2.3.2.post1") == "numpy-2.3.2.post1-variants.json");
}

namespace {

// `count` names "<prefix>0", "<prefix>1", ... as a JSON list's items or an object's keys.
std::string names(std::size_t count, std::string_view prefix, std::string_view after_each = "") {
    std::string out;
    for (std::size_t i = 0; i < count; ++i) {
        out += (out.empty() ? "\"" : ", \"") + std::string(prefix) + std::to_string(i) + "\"" + std::string(after_each);
    }
    return out;
}

std::string list(std::size_t count, std::string_view prefix) { return "[" + names(count, prefix) + "]"; }
std::string object(std::size_t count, std::string_view prefix, std::string_view value) {
    return "{" + names(count, prefix, ": " + std::string(value)) + "}";
}

}  // namespace

TEST_CASE("pep825: each count and length is held to its limit, at it taken, past it refused naming it", "[pep825]") {
    const limits within;
    const auto nvidia = [](std::string_view features) {
        return document(R"({"namespace": ["nvidia"]})", R"({"big": {"nvidia": )" + std::string(features) + "}}");
    };
    const auto labels = [](std::size_t count) { return document(R"({"namespace": ["nvidia"]})", object(count, "l", "{}")); };
    const auto listed = [](std::size_t count) { return document(R"({"namespace": )" + list(count, "n") + "}", "{}"); };
    const auto in_label = [](std::size_t count) {
        return document(R"({"namespace": )" + list(16, "n") + "}", R"({"big": )" + object(count, "n", "{}") + "}");
    };
    const auto all_spaces = [](std::size_t label_count) {
        return document(R"({"namespace": )" + list(16, "n") + "}", object(label_count, "l", object(16, "n", "{}")));
    };
    const auto features = [&](std::size_t count) { return nvidia(object(count, "f", R"(["1"])")); };
    const auto all_features = [](std::size_t spaces) {
        return document(R"({"namespace": )" + list(spaces, "n") + "}",
                        R"({"big": )" + object(spaces, "n", object(32, "f", R"(["1"])")) + "}");
    };
    const auto values = [&](std::size_t count) { return nvidia(R"({"sm_arch": )" + list(count, "v") + "}"); };
    const auto all_values = [&](std::size_t feature_count) { return nvidia(object(feature_count, "f", list(128, "v"))); };
    const auto value_of = [&](std::size_t length) { return nvidia(R"({"sm_arch": [")" + std::string(length, '9') + R"("]})"); };
    const auto label_of = [](std::size_t length) {
        return document(R"({"namespace": ["nvidia"]})", "{\"" + std::string(length, 'l') + "\": {}}");
    };

    struct limit_case {
        const char* what;
        std::function<std::string(std::size_t)> make;
        std::size_t at;  // the largest count (or length) taken
        std::string reason;
    };
    const std::vector<limit_case> cases = {
        {"labels", labels, within.labels, "map at most 64 labels: variants has 65"},
        {"namespaces listed", listed, within.namespaces,
         "list at most 16 namespaces in default-priorities: default-priorities.namespace lists 17"},
        {"namespaces in a label", in_label, within.namespaces, "use at most 16 namespaces per label: variants.big has 17"},
        {"namespaces in all (16 per label)", all_spaces, within.total_namespaces / 16,
         "use at most 256 namespaces in all: variants.l16 brings the count to 272"},
        {"features in a namespace", features, within.features,
         "list at most 32 features per namespace: variants.big.nvidia has 33"},
        {"features in all (32 per namespace)", all_features, within.total_features / 32,
         "use at most 256 features in all: variants.big.n8 brings the count to 288"},
        {"values in a feature", values, within.values,
         "list at most 128 values per feature: variants.big.nvidia.sm_arch lists 129"},
        {"values in all (128 per feature)", all_values, within.total_values / 128,
         "use at most 1024 values in all: variants.big.nvidia.f8 brings the count to 1152"},
        {"a value's length", value_of, within.name_length,
         "use values of at most 64 characters: variants.big.nvidia.sm_arch has one of 65"},
        {"a label's length", label_of, within.name_length, "use labels of at most 64 characters: variants has one of 65"},
    };
    for (const auto& one : cases) {
        CAPTURE(one.what);
        auto taken = parse_variant_metadata(one.make(one.at));
        if (!taken) FAIL(taken.error().message);
        CHECK_THAT(refusal(one.make(one.at + 1)), Catch::StartsWith(one.reason));
    }
}

TEST_CASE("pep825: the byte limit counts the whole file, whitespace included", "[pep825]") {
    const limits within;
    const auto padded = [&](std::size_t size) { return cuda_wheel + std::string(size - cuda_wheel.size(), ' '); };
    CHECK(parse_variant_metadata(padded(within.bytes)).has_value());
    CHECK_THAT(refusal(padded(within.bytes + 1)),
               Catch::Equals("keep variant.json within 65536 bytes: it is 65537 (whitespace counts)"));
    CHECK(check_size(within.bytes).has_value());
    CHECK_FALSE(check_size(5ULL << 30).has_value());  // as an archive declares it, before any inflating
    // Other limits, for a caller that keeps its own.
    limits tight;
    tight.values = 1;
    CHECK_THAT(refusal_with(cuda_wheel, tight), Catch::Contains("list at most 1 values per feature"));
}
