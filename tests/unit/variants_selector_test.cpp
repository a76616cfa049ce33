#include <catch2/catch.hpp>

#include <string>
#include <utility>
#include <vector>

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
        // issue 16: what people copy. A wheel's own label, with or without its '+'
        {"cu130sm89torch2.10.0", "cu130-torch2.10.0-sm89"},
        {"+cu130sm89torch2.10.0", "cu130-torch2.10.0-sm89"},
        {"cu12torch2.8cxx11abiTRUE", "cu12-torch2.8-cxx11abi1"},
        {"cu130sm89", "cu130-sm89"},
        // underscores, as a METADATA Version or a hand may write the label
        {"cu130_torch2.10", "cu130-torch2.10"},
        {"cu130_torch2.10_sm89", "cu130-torch2.10-sm89"},
        // nvidia-smi's compute capability, nvcc's arch
        {"sm8.9", "sm89"},
        {"cu130-sm12.0", "cu130-sm120"},
        {"sm_89", "sm89"},
        {"SM_120-cu130", "cu130-sm120"},
        // torch.__version__
        {"torch2.10.0+cu130", "cu130-torch2.10.0"},
        {"torch2.10.0+cu130-sm89", "cu130-torch2.10.0-sm89"},
        {"torch2.8.0+rocm6.4", "rocm6.4-torch2.8.0"},
        {"torch2.8.0+cpu", "cpu-torch2.8.0"},
        // CUDA with its dot, as torch.version.cuda prints it
        {"cuda13.0", "cu130"},
        {"cu12.8-torch2.8", "cu128-torch2.8"},
        {"cuda9.2", "cu92"},
        // a GPU that runs sm_90a code is a compute capability 9.0
        {"sm90a", "sm90"},
        {"cu130-torch2.10-sm90a", "cu130-torch2.10-sm90"},
        // issue 16 item 8: a two-digit minor has no compact spelling; cu1210 would read as nothing
        {"cuda12.10", "cu12.10"},
        {"cu12.10", "cu12.10"},
        {"cu10.12", "cu10.12"},
        {"cu18.90-torch2.10", "cu18.90-torch2.10"},
        {"cu321", "cu321"},
        // issue 28: what torch.__version__, nvidia-smi and nvcc print, pasted, where it agrees
        {"2.10.0+cu130", "cu130-torch2.10.0"},
        {"2.10.0+cu130-sm8.9", "cu130-torch2.10.0-sm89"},
        {"cu130-torch2.10.0+cu130", "cu130-torch2.10.0"},
        {"cu130-2.10.0+cu130-sm89", "cu130-torch2.10.0-sm89"},
        {"cuda13.0-2.10.0+cu130", "cu130-torch2.10.0"},    // nvidia-smi's "CUDA Version: 13.0"
        {"cuda12.8.93-2.8.0+cu128", "cu128-torch2.8.0"},    // nvcc's "V12.8.93"
        {"cu12.8.93", "cu128"},
        {"cu12-2.8.0+cu128", "cu128-torch2.8.0"},           // any 12.x, and torch's 12.8: 12.8
        {"torch2.10-2.10.0+cu130", "cu130-torch2.10.0"},
        {"2.9.0.dev20250716+cu128", "cu128-torch2.9.0"},     // a nightly's torch.__version__
        {"torch2.9.0.dev20250716+cu128", "cu128-torch2.9.0"},
        {"torch2.9.0.dev20250716-cu128", "cu128-torch2.9.0"},
        {"TORCH2.10.0+CU130", "cu130-torch2.10.0"},
        {"2.8.0+rocm6.4", "rocm6.4-torch2.8.0"},
        {"rocm6-2.8.0+rocm6.4", "rocm6.4-torch2.8.0"},
        {"cpu-2.8.0+cpu", "cpu-torch2.8.0"},
        {"+2.10.0+cu130", "cu130-torch2.10.0"},
        {"cu130-sm89-sm8.9", "cu130-sm89"},
        {"sm90a-sm90", "sm90"},
        {"cxx11abi1-cxx11abiTRUE", "cxx11abi1"},
        {"cu130cu130", "cu130"},
        {"cu12cu128", "cu128"},
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
        {"cu130sm89foo", error_kind::not_found, "written together as in a wheel's label"},
        // written together, a contradiction is still one
        {"cu130cu128", error_kind::invalid, "a CUDA version twice"},
        {"cu130sm89torch2.10-torch2.8", error_kind::invalid, "a torch version twice"},
        {"sm80sm90", error_kind::invalid, "a GPU architecture twice"},
        {"sm80.sm90", error_kind::invalid, "a GPU architecture twice"},
        // a family of GPUs is no machine: which of them runs the selector's builds?
        {"sm100f", error_kind::invalid, "names a family of GPUs"},
        {"cu130sm120ftorch2.10", error_kind::invalid, "compute capability"},
        {"+", error_kind::invalid, "empty word"},
        {"torch2.10+", error_kind::invalid, "empty word"},
        {"cu9", error_kind::not_found, "unknown"},
        {"torch0.123", error_kind::not_found, "unknown"},
        {"rocm21.a", error_kind::not_found, "unknown"},
        {"rocm21", error_kind::not_found, "unknown"},
        {"g1a2b3c4d", error_kind::not_found, "unknown"},
        {"torch2.10andhigher", error_kind::not_found, "unknown"},
        // issue 28: a version alone is torch's only where torch.__version__ writes it, before a '+'
        {"2.10.0", error_kind::not_found, "write torch2.10.0 for a torch version"},
        {"cu130-2.10.0", error_kind::not_found, "write torch2.10.0"},
        {"2.123.0+cu130", error_kind::not_found, "unknown variant selector word '2.123.0'"},
        {"2.10.0+cu130-gitb98af95", error_kind::not_found, "unknown"},
        {"2.10.0+cu130+", error_kind::invalid, "empty word"},
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

TEST_CASE("variants: a pasted selector that disagrees with itself names the spellings to use (issue 28)",
          "[variants][selector]") {
    const std::pair<const char*, const char*> table[] = {
        // torch.__version__ says what torch was built with: its value is offered first
        {"cu128-torch2.10.0+cu130",
         "use cu130-torch2.10.0 (what torch.__version__ says) or cu128-torch2.10.0: the variant selector "
         "'cu128-torch2.10.0+cu130' names a CUDA version twice (cu128 and cu130), and a machine has one"},
        {"cuda12.8-2.10.0+cu130-sm89",
         "use cu130-torch2.10.0-sm89 (what torch.__version__ says) or cu128-torch2.10.0-sm89: the variant selector "
         "'cuda12.8-2.10.0+cu130-sm89' names a CUDA version twice (cu128 and cu130), and a machine has one"},
        {"torch2.8-2.10.0+cu130",
         "use cu130-torch2.10.0 (what torch.__version__ says) or cu130-torch2.8: the variant selector "
         "'torch2.8-2.10.0+cu130' names a torch version twice (torch2.8 and torch2.10.0), and a machine has one"},
        {"2.10.0+cu130-cpu",
         "use cu130-torch2.10.0 (what torch.__version__ says) or cpu-torch2.10.0: the variant selector "
         "'2.10.0+cu130-cpu' names more than one "
         "of CUDA, ROCm, cpu and xpu (cu130 and cpu), and a machine has one"},
        // no torch.__version__: in the order written
        {"cu130-cu128",
         "use cu130 or cu128: the variant selector 'cu130-cu128' names a CUDA version twice (cu130 and cu128), "
         "and a machine has one"},
        {"cu13-cu128",
         "use cu13 or cu128: the variant selector 'cu13-cu128' names a CUDA version twice (cu13 and cu128), "
         "and a machine has one"},
        {"sm80sm90",
         "use sm80 or sm90: the variant selector 'sm80sm90' names a GPU architecture twice (sm80 and sm90), "
         "and a machine has one"},
        {"cxx11abi1-cxx11abi0",
         "use cxx11abi1 or cxx11abi0: the variant selector 'cxx11abi1-cxx11abi0' names the C++ ABI twice "
         "(cxx11abi1 and cxx11abi0), and a machine has one"},
        // a spelling that would still be refused is not offered
        {"cu130-sm89-cpu",
         "use cu130-sm89: the variant selector 'cu130-sm89-cpu' names more than one of CUDA, ROCm, cpu and xpu "
         "(cu130 and cpu), and a machine has one"},
    };
    for (const auto& [text, message] : table) {
        CAPTURE(text);
        const auto result = parse_selector(text);
        REQUIRE_FALSE(result);
        CHECK(result.error().kind == wheelhouse::error_kind::invalid);
        CHECK(result.error().message == message);
    }
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
        // issue 16 item 4: arch-specific code runs on exactly its compute capability, family code
        // on its family from its minor up (NVIDIA CUDA Programming Guide, "Feature Availability")
        {"cu130sm90atorch2.10", "cu130-sm90", true},
        {"cu130sm90atorch2.10", "cu130-sm89", false},
        {"sm100a", "sm100", true},
        {"sm100a", "sm103", false},
        {"sm100f", "sm100", true},
        {"sm100f", "sm103", true},
        {"sm100f", "sm110", false},
        {"sm100f", "sm120", false},
        {"sm103f", "sm100", false},
        {"sm120f", "sm121", true},
        {"sm120a", "sm121", false},
        {"sm80sm90a", "sm90", true},
        {"sm80sm90a", "sm86", false},
        {"sm89", "sm90", false},  // plain code is taken for exactly its GPU, as before
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
        // of the archs that run on the GPU: its own with its architecture's features, then its
        // family's, then an earlier minor's family build, then plain code; a single arch before a
        // fat binary with the same
        {"sm90", "sm90a", "sm90"},
        {"cu130-sm90", "cu130sm90atorch2.10", "cu130sm90torch2.10"},
        {"sm100", "sm100a", "sm100f"},
        {"sm100", "sm100f", "sm100"},
        {"sm103", "sm103f", "sm100f"},
        {"sm103", "sm100f", "sm103"},
        {"sm90", "sm90a", "sm80.sm90a"},
        {"sm90", "sm80.sm90a", "sm90"},
    };
    for (const auto& [selector_text, better, worse] : table) {
        CAPTURE(selector_text, better, worse);
        const auto want = parsed(selector_text);
        REQUIRE(satisfies(decode_local_label(better), want));
        REQUIRE(satisfies(decode_local_label(worse), want));
        CHECK(specificity(decode_local_label(better), want) > specificity(decode_local_label(worse), want));
    }
}

TEST_CASE("variants: a canonical spelling the decoder reads back, for every value it makes", "[variants][selector]") {
    const std::pair<const char*, const char*> cuda[] = {
        {"13.0", "cu130"}, {"12.8", "cu128"}, {"12", "cu12"}, {"9.2", "cu92"}, {"8.0", "cu80"},
        {"32.1", "cu321"}, {"12.10", "cu12.10"}, {"10.12", "cu10.12"}, {"1.5", "cu1.5"}, {"92.1", "cu921"},
    };
    for (const auto& [value, word] : cuda) {
        CAPTURE(value);
        CHECK(cuda_word(value) == word);
        CHECK(decode_local_label(word).cuda == value);
    }
    CHECK(sm_word("8.9") == "sm89");
    CHECK(sm_word("12.0") == "sm120");
    CHECK(sm_word("9.0a") == "sm90a");
}

TEST_CASE("variants: each selector's other spellings, and each of them answers as it", "[variants][selector]") {
    const std::pair<const char*, std::vector<std::string>> table[] = {
        {"cu130-torch2.10-sm89",
         {"cu130sm89torch2.10", "cu130_torch2.10_sm89", "torch2.10+cu130-sm89", "cu130-torch2.10-sm8.9",
          "cuda13.0-torch2.10-sm89"}},
        {"cu12-torch2.8-cxx11abi1", {"cu12torch2.8cxx11abi1", "cu12_torch2.8_cxx11abi1", "torch2.8+cu12-cxx11abi1"}},
        {"rocm6.4-torch2.8", {"rocm6.4torch2.8", "rocm6.4_torch2.8", "torch2.8+rocm6.4"}},
        {"cu12.10", {"cuda12.10"}},
        {"cu130", {"cuda13.0"}},
        {"sm120", {"sm12.0"}},
        {"torch2.10", {}},
        {"cpu", {}},
    };
    for (const auto& [text, expected] : table) {
        CAPTURE(text);
        const auto wanted = parsed(text);
        const auto spellings = other_spellings(wanted);
        CHECK(spellings == expected);
        for (const auto& spelling : spellings) {
            CAPTURE(spelling);
            CHECK(parsed(spelling).canonical() == wanted.canonical());
        }
    }
}
