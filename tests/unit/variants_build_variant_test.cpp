#include <catch2/catch.hpp>

#include <boost/json.hpp>

#include <cstdint>
#include <random>
#include <regex>
#include <string>
#include <string_view>
#include <vector>

#include "wheelhouse/pep427/wheel_filename.hpp"
#include "wheelhouse/variants/build_variant.hpp"

// The expected variants name only the fields they decode; the rest keep their defaults, which
// g++ 12 would otherwise warn about for designated initializers.
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

using wheelhouse::variants::build_variant;
using wheelhouse::variants::decode;
using wheelhouse::variants::decode_build_tag;
using wheelhouse::variants::decode_local_label;
using wheelhouse::variants::to_json;

namespace Catch {
template <>
struct StringMaker<build_variant> {
    static std::string convert(const build_variant& variant) { return boost::json::serialize(to_json(variant)); }
};
}  // namespace Catch

namespace {

// PEP 440's normal form of a local label, written here independently of the decoder: lower case,
// '-' and '_' become '.', all-digit segments lose their leading zeros.
std::string pep440_normal_form(std::string_view label) {
    std::string out;
    std::string segment;
    auto flush = [&] {
        if (segment.empty()) return;
        if (segment.find_first_not_of("0123456789") == std::string::npos) {
            const auto first = segment.find_first_not_of('0');
            segment = first == std::string::npos ? "0" : segment.substr(first);
        }
        if (!out.empty()) out += '.';
        out += segment;
        segment.clear();
    };
    for (char c : label) {
        if (c == '.' || c == '-' || c == '_') flush();
        else segment += (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
    }
    flush();
    return out;
}

struct label_case {
    const char* label;
    build_variant expected;
};

}  // namespace

TEST_CASE("variants: real local labels decode to what their builders meant", "[variants]") {
    // Labels from real release assets and indexes; where one came from is noted once per group.
    const std::vector<label_case> table = {
        // Dao-AILab/flash-attention GitHub releases
        {"cu12torch2.7cxx11abiTRUE", {.cuda = "12", .torch = "2.7", .cxx11abi = true}},
        {"cu12torch2.7cxx11abiFALSE", {.cuda = "12", .torch = "2.7", .cxx11abi = false}},
        {"cu12torch2.8cxx11abiTRUE", {.cuda = "12", .torch = "2.8", .cxx11abi = true}},
        {"cu12torch2.6cxx11abiFALSE", {.cuda = "12", .torch = "2.6", .cxx11abi = false}},
        {"cu118torch2.1cxx11abiFALSE", {.cuda = "11.8", .torch = "2.1", .cxx11abi = false}},
        {"cu118torch2.0cxx11abiTRUE", {.cuda = "11.8", .torch = "2.0", .cxx11abi = true}},
        {"cu122torch2.3cxx11abiFALSE", {.cuda = "12.2", .torch = "2.3", .cxx11abi = false}},
        {"cu123torch2.4cxx11abiTRUE", {.cuda = "12.3", .torch = "2.4", .cxx11abi = true}},
        // the same, as PEP 440 normalises them
        {"cu12torch2.7cxx11abitrue", {.cuda = "12", .torch = "2.7", .cxx11abi = true}},
        {"cu12torch2.8cxx11abifalse", {.cuda = "12", .torch = "2.8", .cxx11abi = false}},
        // mjun0812/flash-attention-prebuild-wheels
        {"cu128torch2.8", {.cuda = "12.8", .torch = "2.8"}},
        {"cu124torch2.5", {.cuda = "12.4", .torch = "2.5"}},
        {"cu126torch2.6", {.cuda = "12.6", .torch = "2.6"}},
        {"cu124torch2.4", {.cuda = "12.4", .torch = "2.4"}},
        {"cu130torch2.9", {.cuda = "13.0", .torch = "2.9"}},
        // kingbri1 / lldacing / Wildminder Windows flash-attn and friends
        {"cu128torch2.8.0cxx11abiFALSE", {.cuda = "12.8", .torch = "2.8.0", .cxx11abi = false}},
        {"cu128torch2.7.0cxx11abiFALSE", {.cuda = "12.8", .torch = "2.7.0", .cxx11abi = false}},
        {"cu130torch2.9.0cxx11abiTRUE", {.cuda = "13.0", .torch = "2.9.0", .cxx11abi = true}},
        {"cu129torch2.8.0cxx11abiTRUE", {.cuda = "12.9", .torch = "2.8.0", .cxx11abi = true}},
        {"cu128torch2.9.0cxx11abi1", {.cuda = "12.8", .torch = "2.9.0", .cxx11abi = true}},
        {"cu130torch2.10.0cxx11abi1", {.cuda = "13.0", .torch = "2.10.0", .cxx11abi = true}},
        {"cu128torch2.10.0cxx11abi0", {.cuda = "12.8", .torch = "2.10.0", .cxx11abi = false}},
        {"cu130torch2.10", {.cuda = "13.0", .torch = "2.10"}},
        {"cu130torch2.9", {.cuda = "13.0", .torch = "2.9"}},
        {"cu128torch2.10.0", {.cuda = "12.8", .torch = "2.10.0"}},
        // woct0rdho/SageAttention and SpargeAttn
        {"cu128torch2.8.0andhigher.post3",
         {.cuda = "12.8", .torch = "2.8.0", .torch_and_higher = true, .unparsed = {"post3"}}},
        {"cu128torch2.9.0andhigher.post4",
         {.cuda = "12.8", .torch = "2.9.0", .torch_and_higher = true, .unparsed = {"post4"}}},
        {"cu130torch2.9.0andhigher.post4",
         {.cuda = "13.0", .torch = "2.9.0", .torch_and_higher = true, .unparsed = {"post4"}}},
        {"cu124torch2.5.1.post3", {.cuda = "12.4", .torch = "2.5.1", .unparsed = {"post3"}}},
        {"cu126torch2.6.0.post1", {.cuda = "12.6", .torch = "2.6.0", .unparsed = {"post1"}}},
        {"cu128torch2.7.1.post2", {.cuda = "12.8", .torch = "2.7.1", .unparsed = {"post2"}}},
        {"cu124torch2.5.1", {.cuda = "12.4", .torch = "2.5.1"}},
        {"cu126torch2.6.0", {.cuda = "12.6", .torch = "2.6.0"}},
        {"cu128torch2.7.0", {.cuda = "12.8", .torch = "2.7.0"}},
        {"cu130torch2.9.1", {.cuda = "13.0", .torch = "2.9.1"}},
        {"cu131torch2.12.mengqin", {.cuda = "13.1", .torch = "2.12", .unparsed = {"mengqin"}}},
        // nunchaku-tech/nunchaku
        {"torch2.5", {.torch = "2.5"}},
        {"torch2.7", {.torch = "2.7"}},
        {"torch2.9", {.torch = "2.9"}},
        {"torch2.10", {.torch = "2.10"}},
        {"cu128torch2.9", {.cuda = "12.8", .torch = "2.9"}},
        {"cu130sm89torch2.10.0", {.cuda = "13.0", .sm = "8.9", .torch = "2.10.0"}},
        // NATTEN Windows builds: torch written without dots
        {"torch240cu124", {.cuda = "12.4", .torch = "2.4.0"}},
        {"torch251cu124", {.cuda = "12.4", .torch = "2.5.1"}},
        {"torch260cu126", {.cuda = "12.6", .torch = "2.6.0"}},
        {"torch270cu128", {.cuda = "12.8", .torch = "2.7.0"}},
        // "cuda-wheels" style
        {"cu128torch28", {.cuda = "12.8", .torch = "2.8"}},
        // PyG (data.pyg.org): pt<major><minor>
        {"pt28cu128", {.cuda = "12.8", .torch = "2.8"}},
        {"pt113cu117", {.cuda = "11.7", .torch = "1.13"}},
        {"pt21cu121", {.cuda = "12.1", .torch = "2.1"}},
        {"pt24cu124", {.cuda = "12.4", .torch = "2.4"}},
        {"pt20cpu", {.torch = "2.0", .cpu = true}},
        {"pt112cpu", {.torch = "1.12", .cpu = true}},
        // PyTorch, torchvision, xformers, vllm, dgl, detectron2 on download indexes
        {"cu128", {.cuda = "12.8"}},
        {"cu126", {.cuda = "12.6"}},
        {"cu130", {.cuda = "13.0"}},
        {"cu129", {.cuda = "12.9"}},
        {"cu118", {.cuda = "11.8"}},
        {"cu121", {.cuda = "12.1"}},
        {"cu117", {.cuda = "11.7"}},
        {"cu113", {.cuda = "11.3"}},
        {"cu102", {.cuda = "10.2"}},
        {"cu101", {.cuda = "10.1"}},
        {"cu100", {.cuda = "10.0"}},
        {"cu92", {.cuda = "9.2"}},
        {"cu90", {.cuda = "9.0"}},
        {"cu80", {.cuda = "8.0"}},
        {"cpu", {.cpu = true}},
        {"cpu.cxx11.abi", {.cxx11abi = true, .cpu = true}},
        {"xpu", {.xpu = true}},
        {"rocm6.4", {.rocm = "6.4"}},
        {"rocm6.2.4", {.rocm = "6.2.4"}},
        {"rocm6.3", {.rocm = "6.3"}},
        {"rocm5.7", {.rocm = "5.7"}},
        {"rocm5.4.2", {.rocm = "5.4.2"}},
        {"cu121.with.pypi.cudnn", {.cuda = "12.1", .unparsed = {"with", "pypi", "cudnn"}}},
        // torch_xla and intel-extension-for-pytorch
        {"cxx11", {.cxx11abi = true}},
        {"cxx11.abi", {.cxx11abi = true}},
        // jaxlib
        {"cuda12.cudnn89", {.cuda = "12", .unparsed = {"cudnn89"}}},
        {"cuda11.cudnn86", {.cuda = "11", .unparsed = {"cudnn86"}}},
        {"cuda111", {.cuda = "11.1"}},
        // vllm nightlies (wheels.vllm.ai) and source builds
        {"g3e8afdf78.cu129", {.cuda = "12.9", .git_hash = "3e8afdf78"}},
        {"gd9105ea80.cu129", {.cuda = "12.9", .git_hash = "d9105ea80"}},
        {"g5bc1ad6ce.d20250603.precompiled",
         {.git_hash = "5bc1ad6ce", .build_date = "20250603", .unparsed = {"precompiled"}}},
        {"marin.fa50698a9a30.cu129", {.cuda = "12.9", .git_hash = "fa50698a9a30", .unparsed = {"marin"}}},
        // setuptools_scm
        {"g1a2b3c4", {.git_hash = "1a2b3c4"}},
        {"g7c539c3.d20250403", {.git_hash = "7c539c3", .build_date = "20250403"}},
        {"g39bf3b02665a", {.git_hash = "39bf3b02665a"}},
        {"d20250316", {.build_date = "20250316"}},
        // PyTorch and torchao source builds
        {"gitb98af95", {.git_hash = "b98af95"}},
        {"gitc5d91d9", {.git_hash = "c5d91d9"}},
        {"git890e0ac8", {.git_hash = "890e0ac8"}},
        {"git20250101.abcdef1", {.git_hash = "abcdef1", .build_date = "20250101"}},
        // DeepSpeed, xformers and pytorch-triton builds from a checkout: the bare hash
        {"e1560d84", {.git_hash = "e1560d84"}},
        {"3abeaa9e.d20250427", {.git_hash = "3abeaa9e", .build_date = "20250427"}},
        {"5d4b92a5.d20251029", {.git_hash = "5d4b92a5", .build_date = "20251029"}},
        {"cf34004b8a", {.git_hash = "cf34004b8a"}},
        // NVIDIA NGC containers' torch
        {"6ddf5cf85e.nv24.04", {.git_hash = "6ddf5cf85e", .unparsed = {"nv24", "4"}}},
        // dated builds
        {"20250101", {.build_date = "20250101"}},
        {"20240229", {.build_date = "20240229"}},
        // ComputeCanada wheelhouse
        {"computecanada", {.unparsed = {"computecanada"}}},
    };
    REQUIRE(table.size() >= 80);
    for (const auto& [label, expected] : table) {
        CAPTURE(label);
        CHECK(decode_local_label(label) == expected);
        CHECK(decode_local_label(std::string("+") + label) == expected);
        // The catalog keeps the normalised label; it must say exactly the same.
        CHECK(decode_local_label(pep440_normal_form(label)) == expected);
    }
}

TEST_CASE("variants: how each number is read", "[variants]") {
    const std::vector<label_case> table = {
        // two CUDA digits: a major when they start with 1, else major.minor
        {"cu10", {.cuda = "10"}},
        {"cu11", {.cuda = "11"}},
        {"cu13", {.cuda = "13"}},
        {"cu75", {.cuda = "7.5"}},
        {"cuda128", {.cuda = "12.8"}},
        {"cuda12.8", {.cuda = "12.8"}},
        {"cu12.8torch2.8", {.cuda = "12.8", .torch = "2.8"}},
        {"cuda13.0", {.cuda = "13.0"}},
        // GPU architectures, one or several, with their arch-specific suffix
        {"sm80", {.sm = "8.0"}},
        {"sm120", {.sm = "12.0"}},
        {"sm100", {.sm = "10.0"}},
        {"sm90a", {.sm = "9.0a"}},
        {"sm100f", {.sm = "10.0f"}},
        {"sm90atorch2.8", {.sm = "9.0a", .torch = "2.8"}},
        {"sm80sm86sm89", {.sm = "8.0,8.6,8.9"}},
        {"sm80.sm90", {.sm = "8.0,9.0"}},
        {"sm89.sm89", {.sm = "8.9"}},
        {"cu128sm120torch2.8.0", {.cuda = "12.8", .sm = "12.0", .torch = "2.8.0"}},
        // torch: dotted, or digits alone
        {"torch2", {.torch = "2"}},
        {"torch27", {.torch = "2.7"}},
        {"torch2100", {.torch = "2.10.0"}},
        {"torch2.10.0andhigher", {.torch = "2.10.0", .torch_and_higher = true}},
        {"torch2100andhigher", {.torch = "2.10.0", .torch_and_higher = true}},
        {"torch2.8.0.1", {.torch = "2.8.0", .unparsed = {"1"}}},
        // fuzz/variants_decode_fuzz: the dotted reading took "torch0.129" as torch 0, which
        // "torch0" written alone is not; a lone digit is read the one way
        {"torch2.129", {.torch = "2", .unparsed = {"129"}}},
        {"torch0.4", {.torch = "0.4"}},
        {"torch2.7.20250101", {.torch = "2.7", .build_date = "20250101"}},
        {"pt210cu128", {.cuda = "12.8", .torch = "2.10"}},
        {"pt113", {.torch = "1.13"}},
        // ROCm
        {"rocm6", {.rocm = "6"}},
        {"rocm10.1", {.rocm = "10.1"}},
        {"rocm7.0.0rc1", {.rocm = "7.0.0", .unparsed = {"rc1"}}},
        // C++ ABI spellings
        {"cxx11abi", {.cxx11abi = true}},
        {"cxx11abitrue", {.cxx11abi = true}},
        {"cxx11abifalse", {.cxx11abi = false}},
        {"cxx11abi0", {.cxx11abi = false}},
        {"cxx11abi1", {.cxx11abi = true}},
        {"CXX11ABIFALSE", {.cxx11abi = false}},
        {"cu128-cxx11-abi", {.cuda = "12.8", .cxx11abi = true}},
        // separators as written before normalisation
        {"cu128_torch2.8", {.cuda = "12.8", .torch = "2.8"}},
        {"CU130-SM89-Torch2.10.0", {.cuda = "13.0", .sm = "8.9", .torch = "2.10.0"}},
        {"torch2.008", {.torch = "2.8"}},
        // a chain that meets something unknown keeps what it read
        {"cpuavx2", {.cpu = true, .unparsed = {"avx2"}}},
        {"cu128foo.torch2.8", {.cuda = "12.8", .torch = "2.8", .unparsed = {"foo"}}},
        // second, different values are kept unparsed; the first one stands
        {"cu118.cu121", {.cuda = "11.8", .unparsed = {"cu121"}}},
        {"cu128cu130", {.cuda = "12.8", .unparsed = {"cu130"}}},
        {"cu128.cu128", {.cuda = "12.8"}},
        {"torch2.7.torch2.8", {.torch = "2.7", .unparsed = {"torch2.8"}}},
        {"cxx11abitrue.cxx11abifalse", {.cxx11abi = true, .unparsed = {"cxx11abifalse"}}},
        {"g1a2b3c4.gabcdef9", {.git_hash = "1a2b3c4", .unparsed = {"gabcdef9"}}},
        // dates must be real days
        {"20250229", {.unparsed = {"20250229"}}},
        {"20251301", {.unparsed = {"20251301"}}},
        {"d19991231", {.unparsed = {"d19991231"}}},
        // hashes: 7 to 40 hex digits; a bare one needs a digit and a letter
        {"g123456", {.unparsed = {"g123456"}}},
        {"g1234567", {.git_hash = "1234567"}},
        {"deadbeef", {.unparsed = {"deadbeef"}}},
        {"1234567", {.unparsed = {"1234567"}}},
        {"abc1234", {.git_hash = "abc1234"}},
        {"g0123456789abcdef0123456789abcdef01234567", {.git_hash = "0123456789abcdef0123456789abcdef01234567"}},
        {"g0123456789abcdef0123456789abcdef012345678", {.unparsed = {"g0123456789abcdef0123456789abcdef012345678"}}},
        {"", {}},
        {"+", {}},
    };
    for (const auto& [label, expected] : table) {
        CAPTURE(label);
        CHECK(decode_local_label(label) == expected);
        CHECK(decode_local_label(pep440_normal_form(label)) == expected);
    }
}

TEST_CASE("variants: labels build farms write, and the look-alikes that stay unread (issue 28)", "[variants]") {
    const std::vector<label_case> table = {
        // torch first as pt with its dots, then CUDA, no separator
        {"pt2.6.0cu126", {.cuda = "12.6", .torch = "2.6.0"}},
        {"pt2.8cu128", {.cuda = "12.8", .torch = "2.8"}},
        {"pt2.10.0cu130", {.cuda = "13.0", .torch = "2.10.0"}},
        {"pt2.6.0cpu", {.torch = "2.6.0", .cpu = true}},
        {"cu126pt2.6.0", {.cuda = "12.6", .torch = "2.6.0"}},
        // 'c' for cu, right after torch
        {"torch2.9c128", {.cuda = "12.8", .torch = "2.9"}},
        {"torch2.10.0c130", {.cuda = "13.0", .torch = "2.10.0"}},
        {"torch29c128", {.cuda = "12.8", .torch = "2.9"}},
        {"pt2.6.0c126", {.cuda = "12.6", .torch = "2.6.0"}},
        {"torch2.9c128sm89", {.cuda = "12.8", .sm = "8.9", .torch = "2.9"}},
        {"torch2.9c128.post1", {.cuda = "12.8", .torch = "2.9", .unparsed = {"post1"}}},
        {"torch2.9.0andhigherc128", {.cuda = "12.8", .torch = "2.9.0", .torch_and_higher = true}},
        // nightlies' date before the machine, with or without a separator
        {"20250301.cu128", {.cuda = "12.8", .build_date = "20250301"}},
        {"20250301cu128", {.cuda = "12.8", .build_date = "20250301"}},
        {"d20250301cu128", {.cuda = "12.8", .build_date = "20250301"}},
        {"20250301cu128torch2.8", {.cuda = "12.8", .torch = "2.8", .build_date = "20250301"}},
        {"20250301.torch2.9c128", {.cuda = "12.8", .torch = "2.9", .build_date = "20250301"}},
        {"cu128.20250301", {.cuda = "12.8", .build_date = "20250301"}},
        // nvcc's V12.8.93: the patch says nothing a build depends on
        {"cuda12.8.93", {.cuda = "12.8"}},
        {"cu12.8.1torch2.8", {.cuda = "12.8", .torch = "2.8"}},
        // ... and what must not decode. A 'c' anywhere but after torch, or not three digits
        // starting with 1, could be a build counter or a CUDA major: nothing is guessed.
        {"c128", {.unparsed = {"c128"}}},
        {"c128torch2.9", {.unparsed = {"c128torch2", "9"}}},
        {"sm89c128", {.sm = "8.9", .unparsed = {"c128"}}},
        {"cu128c129", {.cuda = "12.8", .unparsed = {"c129"}}},
        {"torch2.9c12", {.torch = "2.9", .unparsed = {"c12"}}},
        {"torch2.9c1", {.torch = "2.9", .unparsed = {"c1"}}},
        {"torch2.9c1280", {.torch = "2.9", .unparsed = {"c1280"}}},
        {"torch2.9c928", {.torch = "2.9", .unparsed = {"c928"}}},
        {"torch2.9c128x", {.torch = "2.9", .unparsed = {"c128x"}}},
        {"torch2.9.c128", {.torch = "2.9", .unparsed = {"c128"}}},
        {"torch2.9c", {.torch = "2.9", .unparsed = {"c"}}},
        // a date that is no day, not eight digits, or not followed by a token
        {"20251301cu128", {.unparsed = {"20251301cu128"}}},
        {"2025030cu128", {.unparsed = {"2025030cu128"}}},
        {"202503011cu128", {.unparsed = {"202503011cu128"}}},
        {"20250301foo", {.unparsed = {"20250301foo"}}},
        // pt needs its two digits or its dots; a patch only after a dotted minor
        {"pt2.cu126", {.cuda = "12.6", .unparsed = {"pt2"}}},
        {"cu128.93", {.cuda = "12.8", .unparsed = {"93"}}},
        {"cuda12.8.9312", {.cuda = "12.8", .unparsed = {"9312"}}},
    };
    for (const auto& [label, expected] : table) {
        CAPTURE(label);
        CHECK(decode_local_label(label) == expected);
        CHECK(decode_local_label(std::string("+") + label) == expected);
        CHECK(decode_local_label(pep440_normal_form(label)) == expected);
    }
}

TEST_CASE("variants: what is not understood never throws and is kept in unparsed", "[variants]") {
    const std::vector<std::pair<const char*, std::vector<std::string>>> junk = {
        {"foo", {"foo"}},
        {"cu", {"cu"}},
        {"cu1", {"cu1"}},
        {"cu1280", {"cu1280"}},
        {"cu08", {"cu08"}},
        {"cupy", {"cupy"}},
        {"torch", {"torch"}},
        {"torch12345", {"torch12345"}},
        {"torch0.129", {"torch0", "129"}},
        {"torch0", {"torch0"}},
        {"pytorch2.8", {"pytorch2", "8"}},
        {"sm8", {"sm8"}},
        {"sm1200", {"sm1200"}},
        {"sm09", {"sm09"}},
        {"pt2", {"pt2"}},
        {"pt1000", {"pt1000"}},
        {"rocm62", {"rocm62"}},
        // fuzz/variants_decode_fuzz: a dot after two digits made them ROCm 10, which "rocm10" is not
        {"rocm10.git8p", {"rocm10", "git8p"}},
        {"rocm", {"rocm"}},
        {"xcu128", {"xcu128"}},
        {"post1.dev2", {"post1", "dev2"}},
        {"mengqin", {"mengqin"}},
        {"a..b", {"a", "b"}},
        {"---", {}},
        {"ünïcode.cu128", {"ünïcode"}},
        {"sp ace+plus", {"sp ace+plus"}},
    };
    for (const auto& [label, pieces] : junk) {
        CAPTURE(label);
        build_variant variant;
        REQUIRE_NOTHROW(variant = decode_local_label(label));
        CHECK(variant.unparsed == pieces);
    }
    CHECK(decode_local_label("ünïcode.cu128").cuda == "12.8");
    CHECK(decode_local_label("foo").empty());
    CHECK_FALSE(decode_local_label("cpu").empty());
    CHECK_FALSE(decode_local_label("torch2.8").empty());
}

TEST_CASE("variants: decoding arbitrary text never fails and never invents", "[variants]") {
    // A fixed seed, so that a failure can be replayed; the alphabet leans on what labels are made of.
    std::mt19937_64 random(0x5eed'cafe'2025ULL);
    const std::vector<std::string> pieces = {"cu",  "cuda", "sm",  "torch", "pt", "cxx11", "abi", "true", "false",
                                             "rocm", "cpu", "xpu", "g",     "git", "d",    "andhigher", "post",
                                             "1",   "2",    "8",   "0",     "12", "128",   "2025", "0101", "a",
                                             "f",   "x",    ".",   "-",     "_",  "+",     "..",   "ab",   "9"};
    const std::regex well_formed_version(R"(\d+(\.\d+){0,2})");
    const std::regex well_formed_sm(R"(\d+\.\d[af]?(,\d+\.\d[af]?)*)");
    const std::regex well_formed_hash(R"([0-9a-f]{7,40})");
    const std::regex well_formed_date(R"(20\d{6})");
    for (int round = 0; round < 20000; ++round) {
        std::string label;
        const auto length = random() % 12;
        for (std::uint64_t i = 0; i < length; ++i) {
            if (random() % 8 == 0) label += static_cast<char>(random() % 256);  // any byte at all
            else label += pieces[random() % pieces.size()];
        }
        CAPTURE(label);
        build_variant variant;
        REQUIRE_NOTHROW(variant = decode_local_label(label));
        const std::string normal = pep440_normal_form(label);
        CHECK(decode_local_label(normal) == variant);
        for (const auto& piece : variant.unparsed) {
            CHECK_FALSE(piece.empty());
            CHECK(piece.find_first_of(".-_") == std::string::npos);
            CHECK(normal.find(piece) != std::string::npos);
        }
        if (variant.cuda) CHECK(std::regex_match(*variant.cuda, well_formed_version));
        if (variant.torch) CHECK(std::regex_match(*variant.torch, well_formed_version));
        if (variant.rocm) CHECK(std::regex_match(*variant.rocm, well_formed_version));
        if (variant.sm) CHECK(std::regex_match(*variant.sm, well_formed_sm));
        if (variant.git_hash) CHECK(std::regex_match(*variant.git_hash, well_formed_hash));
        if (variant.build_date) CHECK(std::regex_match(*variant.build_date, well_formed_date));
        CHECK((!variant.torch_and_higher || variant.torch.has_value()));
        REQUIRE_NOTHROW(decode_build_tag(label));
    }
}

TEST_CASE("variants: build tags that name torch and CUDA", "[variants]") {
    const std::vector<std::pair<const char*, build_variant>> table = {
        // pixeloven/woct0rdho SageAttention Linux builds: {torch digits}.{cuda digits}
        {"280.129", {.cuda = "12.9", .torch = "2.8.0"}},
        {"280.128", {.cuda = "12.8", .torch = "2.8.0"}},
        {"270.128", {.cuda = "12.8", .torch = "2.7.0"}},
        {"260.126", {.cuda = "12.6", .torch = "2.6.0"}},
        {"290.130", {.cuda = "13.0", .torch = "2.9.0"}},
        {"2100.130", {.cuda = "13.0", .torch = "2.10.0"}},
        {"251.124", {.cuda = "12.4", .torch = "2.5.1"}},
        {"241.118", {.cuda = "11.8", .torch = "2.4.1"}},
        // ordinary build numbers and everything else: nothing
        {"1", {}},
        {"0", {}},
        {"12", {}},
        {"280", {}},
        {"8.9", {}},
        {"12.8", {}},
        {"280.1290", {}},
        {"280.09", {}},
        {"280.129a", {}},
        {"280.129.1", {}},
        {"0280.129", {}},
        {"2050.129", {}},
        {"12345.129", {}},
        {"1_post", {}},
        {"", {}},
    };
    for (const auto& [tag, expected] : table) {
        CAPTURE(tag);
        CHECK(decode_build_tag(tag) == expected);
    }
}

TEST_CASE("variants: a wheel's label and build tag together, the label winning", "[variants]") {
    wheelhouse::pep427::wheel_filename wheel;
    wheel.filename = "sageattention-2.2.0+cu128-280.129-cp312-cp312-linux_x86_64.whl";
    wheel.version_text = "2.2.0+cu128";
    wheel.version.release = {2, 2, 0};
    wheel.version.local = {std::string("cu128")};
    wheel.build = wheelhouse::pep427::build_tag{280, ".129", "280.129"};
    CHECK(decode(wheel) == build_variant{.cuda = "12.8", .torch = "2.8.0"});

    wheel.version_text = "2.2.0";
    wheel.version.local.clear();
    CHECK(decode(wheel) == build_variant{.cuda = "12.9", .torch = "2.8.0"});

    wheel.build->text.clear();  // number and suffix say the same
    CHECK(decode(wheel) == build_variant{.cuda = "12.9", .torch = "2.8.0"});

    wheel.build = wheelhouse::pep427::build_tag{1, "", "1"};
    CHECK(decode(wheel).empty());

    // The label as the filename writes it, raw spelling included.
    wheel.version_text = "2.8.3+cu12torch2.7cxx11abiTRUE";
    wheel.build.reset();
    CHECK(decode(wheel) == build_variant{.cuda = "12", .torch = "2.7", .cxx11abi = true});

    // No '+' in the text: the parsed parts are used.
    wheel.version_text = "2.10.0";
    wheel.version.local = {std::string("cu130sm89torch2"), std::uint64_t{10}, std::uint64_t{0}};
    CHECK(decode(wheel) == build_variant{.cuda = "13.0", .sm = "8.9", .torch = "2.10.0"});
}

TEST_CASE("variants: JSON holds only what was decoded", "[variants]") {
    auto json_of = [](const char* label) { return boost::json::value(to_json(decode_local_label(label))); };
    const std::vector<std::pair<const char*, const char*>> table = {
        {"", "{}"},
        {"post3", R"({"unparsed":["post3"]})"},
        {"cu130sm89torch2.10.0", R"({"cuda":"13.0","sm":"8.9","torch":"2.10.0"})"},
        {"cu128torch2.8.0andhigher.post3",
         R"({"cuda":"12.8","torch":"2.8.0","torch_and_higher":true,"unparsed":["post3"]})"},
        {"cpu.cxx11.abi", R"({"cxx11abi":true,"cpu":true})"},
        {"cu12torch2.7cxx11abiFALSE", R"({"cuda":"12","torch":"2.7","cxx11abi":false})"},
        {"rocm6.4.xpu", R"({"rocm":"6.4","xpu":true})"},
        {"g1a2b3c4.d20250101", R"({"git_hash":"1a2b3c4","build_date":"20250101"})"},
        {"sm80sm90a", R"({"sm":"8.0,9.0a"})"},
    };
    for (const auto& [label, json] : table) {
        CAPTURE(label);
        CHECK(json_of(label) == boost::json::parse(json));
    }
    // Keys come in one fixed order, whatever order the label wrote them in.
    CHECK(boost::json::serialize(to_json(decode_local_label("torch2.8cu128cxx11abi1"))) ==
          R"({"cuda":"12.8","torch":"2.8","cxx11abi":true})");
}

TEST_CASE("variants: empty means nothing decoded, whatever is unparsed", "[variants]") {
    CHECK(build_variant{}.empty());
    CHECK(build_variant{.unparsed = {"post3"}}.empty());
    CHECK_FALSE(build_variant{.cuda = "12.8"}.empty());
    CHECK_FALSE(build_variant{.cxx11abi = false}.empty());
    CHECK_FALSE(build_variant{.xpu = true}.empty());
    CHECK_FALSE(build_variant{.build_date = "20250101"}.empty());
}
