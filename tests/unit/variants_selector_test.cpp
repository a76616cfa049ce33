#include <catch2/catch.hpp>

#include "wheelhouse/variants/selector.hpp"

using namespace wheelhouse::variants;

namespace {
selector parsed(std::string_view text) {
    auto result = parse_selector(text);
    REQUIRE(result);
    return *result;
}
}  // namespace

TEST_CASE("variants: selectors parse into one canonical spelling", "[variants][selector]") {
    const std::pair<const char*, const char*> table[] = {
        {"cu130", "cu130"},
        {"cu12", "cu12"},
        {"cu128", "cu128"},
        {"cu130-torch2.10", "cu130-torch2.10"},
        {"torch2.10-cu130", "cu130-torch2.10"},
        {"torch2.10-sm89", "torch2.10-sm89"},
        {"sm89-cu130-torch2.10", "cu130-torch2.10-sm89"},
        {"sm120-cu130", "cu130-sm120"},
        {"cxx11abi1", "cxx11abi1"},
        {"cxx11abiTRUE-cu128", "cu128-cxx11abi1"},
        {"cxx11abi0", "cxx11abi0"},
        {"rocm6.4", "rocm6.4"},
        {"cpu", "cpu"},
        {"CPU-torch2.8", "cpu-torch2.8"},
        {"xpu", "xpu"},
        {"torch2.10.0", "torch2.10.0"},
        {"pt28-cu126", "cu126-torch2.8"},
    };
    for (const auto& [text, canonical] : table) {
        CAPTURE(text);
        CHECK(parsed(text).canonical() == canonical);
    }
}

TEST_CASE("variants: bad selectors are refused with the reason", "[variants][selector]") {
    using wheelhouse::error_kind;
    struct row {
        const char* text;
        error_kind kind;
        const char* phrase;
    };
    const row table[] = {
        {"cu130-cu128", error_kind::invalid, "a CUDA version twice"},
        {"torch2.8-torch2.10", error_kind::invalid, "a torch version twice"},
        {"cu130-cpu", error_kind::invalid, "more than one of CUDA, ROCm, cpu and xpu"},
        {"rocm6.4-cu130", error_kind::invalid, "more than one"},
        {"cpu-sm89", error_kind::invalid, "SM architecture without CUDA"},
        {"cu130--torch2.10", error_kind::invalid, "empty word"},
        {"-cu130", error_kind::invalid, "empty word"},
        {"cu130-", error_kind::invalid, "empty word"},
        {"", error_kind::invalid, "empty"},
        {"banana", error_kind::not_found, "unknown variant selector word 'banana'"},
        {"cu130-banana", error_kind::not_found, "cuNNN"},
        {"cu130sm89", error_kind::not_found, "joined by '-'"},
        {"g1a2b3c4d", error_kind::not_found, "unknown"},
        {"torch2.10andhigher", error_kind::not_found, "unknown"},
    };
    for (const auto& [text, kind, phrase] : table) {
        CAPTURE(text);
        const auto result = parse_selector(text);
        REQUIRE_FALSE(result);
        CHECK(result.error().kind == kind);
        CHECK_THAT(result.error().message, Catch::Contains(phrase));
    }
    CHECK_FALSE(parse_selector(std::string(200, 'a')));
    CHECK_THAT(parse_selector(std::string(200, 'a')).error().message, Catch::Contains("longer than"));
}

TEST_CASE("variants: which builds fit a selector", "[variants][selector]") {
    struct row {
        const char* label;
        const char* selector;
        bool fits;
    };
    const row table[] = {
        {"cu130torch2.10", "cu130-torch2.10-sm89", true},
        {"cu130sm89torch2.10.0", "cu130-torch2.10-sm89", true},
        {"cu130sm120torch2.10.0", "cu130-torch2.10-sm89", false},
        {"cu128torch2.8", "cu130-torch2.10", false},
        {"cu128torch2.10", "cu130-torch2.10", false},
        {"cu130torch2.8", "cu130-torch2.10", false},
        {"cu12torch2.7cxx11abitrue", "cu128-torch2.7", true},   // CUDA-major-only build fits 12.8
        {"cu12torch2.7cxx11abitrue", "cu130-torch2.7", false},
        {"cu128torch2.7", "cu12", true},                        // any 12.x
        {"cu128torch2.8.0andhigher", "cu128-torch2.11", true},  // a lower bound fits later torch
        {"cu128torch2.8.0andhigher", "cu128-torch2.7", false},
        {"cu12torch2.7cxx11abifalse", "cxx11abi1", false},
        {"cu12torch2.7cxx11abifalse", "cxx11abi0", true},
        {"cpu", "cu130", false},
        {"cu130", "cpu", false},
        {"rocm6.4", "rocm6.4", true},
        {"rocm6.4", "rocm6.3", false},
        {"rocm6.4", "cu130", false},
        {"cpu", "cpu-torch2.8", true},
        {"torch2.8", "cu130", true},            // says nothing of CUDA: fits
        {"cu130", "torch2.10", true},
        {"g1a2b3c4d", "cu130-torch2.10", true},  // no machine dimension at all
        {"cu130sm80.sm90", "cu130-sm90", true},  // fat binary
        {"xpu", "xpu", true},
    };
    for (const auto& [label, selector_text, fits] : table) {
        CAPTURE(label, selector_text);
        CHECK(satisfies(decode_local_label(label), parsed(selector_text)) == fits);
    }
}

TEST_CASE("variants: the most specific fit scores highest", "[variants][selector]") {
    const auto want = parsed("cu130-torch2.10-sm89");
    const auto general = specificity(decode_local_label("cu130torch2.10"), want);
    const auto exact = specificity(decode_local_label("cu130sm89torch2.10.0"), want);
    const auto fat = specificity(decode_local_label("cu130sm80.sm89torch2.10.0"), want);
    CHECK(exact > general);
    CHECK(exact > fat);
    CHECK(fat > general);
    const auto lower_bound = specificity(decode_local_label("cu130torch2.10andhigher"), want);
    CHECK(general > lower_bound);
    CHECK(specificity(decode_local_label("cu13torch2.10"), want) < general);
    CHECK(speaks_to_machine(decode_local_label("cu130")));
    CHECK_FALSE(speaks_to_machine(decode_local_label("g1a2b3c4d")));
}

TEST_CASE("variants: a build that pins what the selector leaves open, or only bounds torch, loses",
          "[variants][selector]") {
    struct row {
        const char* selector;
        const char* better;
        const char* worse;
    };
    const row table[] = {
        // an sm89 build would reach every GPU that asked only for CUDA and torch
        {"cu130-torch2.10", "cu130torch2.10", "cu130sm89torch2.10.0"},
        {"cu130-torch2.10", "cu130torch2.10", "cu130sm120torch2.10.0"},
        {"cu130", "cu130", "cu130sm89"},
        // nunchaku's torch-only labels beside a CUDA-pinned one
        {"torch2.10", "torch2.10", "cu130torch2.10"},
        // what the user asked for still counts first
        {"cu130-torch2.10-sm89", "cu130sm89torch2.10.0", "cu130torch2.10"},
        {"cu130-sm89", "cu130sm89torch2.10.0", "cu130"},
        {"cu128-cxx11abi1", "cu128torch2.8cxx11abitrue", "cu128"},
        // an exact torch build before a lower bound, whatever the precisions: a 3-part lower
        // bound once tied with a 2-part exact build, and the longer label won
        {"torch2.11", "torch2.11", "torch2.11.0andhigher"},
        {"cu130-torch2.11", "cu130torch2.11", "cu130torch2.11.0andhigher"},
        {"cu130-torch2.11-sm89", "cu130sm89torch2.11", "cu130sm89torch2.11.0andhigher"},
        {"torch2.11", "torch2.11", "torch2.9.0andhigher"},
        {"torch2.11", "torch2.11", "torch2.9andhigher"},
        {"torch2.11", "torch2.11.0", "torch2.11.0andhigher"},
        {"torch2.11.0", "torch2.11.0", "torch2.11.0andhigher"},
    };
    for (const auto& [selector_text, better, worse] : table) {
        CAPTURE(selector_text, better, worse);
        const auto want = parsed(selector_text);
        REQUIRE(satisfies(decode_local_label(better), want));
        REQUIRE(satisfies(decode_local_label(worse), want));
        CHECK(specificity(decode_local_label(better), want) > specificity(decode_local_label(worse), want));
    }
}
