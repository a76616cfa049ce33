#include "wheelhouse/variants/selector.hpp"

#include <charconv>
#include <vector>

namespace wheelhouse::variants {
namespace {

constexpr std::string_view words_understood =
    "cuNNN (cu130, cu128, cu12), rocmX.Y (rocm6.4), cpu, xpu, torchX.Y[.Z] (torch2.10), smNN (sm89, sm120), "
    "cxx11abi0 / cxx11abi1";

std::vector<unsigned> components(std::string_view dotted) {
    std::vector<unsigned> out;
    while (!dotted.empty()) {
        const auto dot = dotted.find('.');
        const auto part = dotted.substr(0, dot);
        unsigned value = 0;
        std::from_chars(part.data(), part.data() + part.size(), value);
        out.push_back(value);
        if (dot == std::string_view::npos) break;
        dotted.remove_prefix(dot + 1);
    }
    return out;
}

// "12" fits "12.8" and the other way round: the shorter is a family the longer belongs to.
bool same_family(std::string_view a, std::string_view b) {
    const auto left = components(a);
    const auto right = components(b);
    const auto common = std::min(left.size(), right.size());
    return std::equal(left.begin(), left.begin() + static_cast<std::ptrdiff_t>(common), right.begin());
}

// Whether a file built against torch `lower` and later fits the wanted torch.
bool at_least(std::string_view wanted, std::string_view lower) {
    auto want = components(wanted);
    auto low = components(lower);
    low.resize(std::max(low.size(), want.size()), 0);
    want.resize(low.size(), 0);
    return want >= low;
}

bool lists_arch(std::string_view archs, std::string_view wanted) {
    while (!archs.empty()) {
        const auto comma = archs.find(',');
        if (archs.substr(0, comma) == wanted) return true;
        if (comma == std::string_view::npos) break;
        archs.remove_prefix(comma + 1);
    }
    return false;
}

enum class accelerator { none, cuda, rocm, cpu, xpu };

accelerator accelerator_of(const build_variant& variant) {
    if (variant.cuda) return accelerator::cuda;
    if (variant.rocm) return accelerator::rocm;
    if (variant.xpu) return accelerator::xpu;
    if (variant.cpu) return accelerator::cpu;
    return accelerator::none;
}

int precision(const std::optional<std::string>& dotted) {
    return dotted ? static_cast<int>(components(*dotted).size()) : 0;
}

std::string digits_of(std::string_view dotted) {
    std::string out;
    for (char c : dotted) {
        if (c != '.') out.push_back(c);
    }
    return out;
}

}  // namespace

std::string selector::canonical() const {
    std::vector<std::string> words;
    const auto& c = constraints;
    if (c.cuda) words.push_back("cu" + digits_of(*c.cuda));
    if (c.rocm) words.push_back("rocm" + *c.rocm);
    if (c.cpu) words.emplace_back("cpu");
    if (c.xpu) words.emplace_back("xpu");
    if (c.torch) words.push_back("torch" + *c.torch);
    if (c.sm) words.push_back("sm" + digits_of(*c.sm));
    if (c.cxx11abi) words.push_back(*c.cxx11abi ? "cxx11abi1" : "cxx11abi0");
    std::string out;
    for (const auto& word : words) {
        if (!out.empty()) out.push_back('-');
        out += word;
    }
    return out;
}

bool speaks_to_machine(const build_variant& v) noexcept {
    return v.cuda || v.sm || v.torch || v.cxx11abi || v.rocm || v.cpu || v.xpu;
}

result<selector> parse_selector(std::string_view text) {
    if (text.empty()) return invalid("the variant selector is empty; use words such as cu130-torch2.10");
    if (text.size() > max_selector_length)
        return invalid("the variant selector is longer than " + std::to_string(max_selector_length) + " characters");
    selector out;
    auto& merged = out.constraints;
    std::size_t start = 0;
    while (start <= text.size()) {
        const auto dash = text.find('-', start);
        const auto word = text.substr(start, dash == std::string_view::npos ? std::string_view::npos : dash - start);
        start = dash == std::string_view::npos ? text.size() + 1 : dash + 1;
        if (word.empty()) return invalid("the variant selector '" + std::string(text) + "' has an empty word");

        const auto decoded = decode_local_label(word);
        const int fields = (decoded.cuda ? 1 : 0) + (decoded.rocm ? 1 : 0) + (decoded.cpu ? 1 : 0) +
                           (decoded.xpu ? 1 : 0) + (decoded.torch ? 1 : 0) + (decoded.sm ? 1 : 0) +
                           (decoded.cxx11abi ? 1 : 0);
        if (fields != 1 || !decoded.unparsed.empty() || decoded.git_hash || decoded.build_date ||
            decoded.torch_and_higher || (decoded.sm && decoded.sm->find(',') != std::string::npos)) {
            return make_error(error_kind::not_found, "unknown variant selector word '" + std::string(word) +
                                                         "'; one word each of: " + std::string(words_understood) +
                                                         ", joined by '-'");
        }
        auto conflict = [&](std::string_view what) {
            return invalid("the variant selector '" + std::string(text) + "' names " + std::string(what) +
                           " twice; keep one");
        };
        if (decoded.cuda) {
            if (merged.cuda) return conflict("a CUDA version");
            merged.cuda = decoded.cuda;
        }
        if (decoded.rocm) {
            if (merged.rocm) return conflict("a ROCm version");
            merged.rocm = decoded.rocm;
        }
        if (decoded.torch) {
            if (merged.torch) return conflict("a torch version");
            merged.torch = decoded.torch;
        }
        if (decoded.sm) {
            if (merged.sm) return conflict("a GPU architecture");
            merged.sm = decoded.sm;
        }
        if (decoded.cxx11abi) {
            if (merged.cxx11abi) return conflict("the C++ ABI");
            merged.cxx11abi = decoded.cxx11abi;
        }
        if (decoded.cpu) {
            if (merged.cpu) return conflict("cpu");
            merged.cpu = true;
        }
        if (decoded.xpu) {
            if (merged.xpu) return conflict("xpu");
            merged.xpu = true;
        }
    }
    const int accelerators = (merged.cuda ? 1 : 0) + (merged.rocm ? 1 : 0) + (merged.cpu ? 1 : 0) + (merged.xpu ? 1 : 0);
    if (accelerators > 1)
        return invalid("the variant selector '" + std::string(text) +
                       "' names more than one of CUDA, ROCm, cpu and xpu; a machine gets one");
    if (merged.sm && (merged.rocm || merged.cpu || merged.xpu))
        return invalid("the variant selector '" + std::string(text) + "' names an SM architecture without CUDA");
    return out;
}

bool satisfies(const build_variant& file, const selector& wanted) noexcept {
    const auto& want = wanted.constraints;
    const auto file_accelerator = accelerator_of(file);
    const auto wanted_accelerator = accelerator_of(want);
    if (file_accelerator != accelerator::none && wanted_accelerator != accelerator::none) {
        if (file_accelerator != wanted_accelerator) return false;
        if (file.cuda && want.cuda && !same_family(*file.cuda, *want.cuda)) return false;
        if (file.rocm && want.rocm && !same_family(*file.rocm, *want.rocm)) return false;
    }
    if (file.torch && want.torch) {
        if (file.torch_and_higher ? !at_least(*want.torch, *file.torch) : !same_family(*file.torch, *want.torch))
            return false;
    }
    if (file.sm && want.sm && !lists_arch(*file.sm, *want.sm)) return false;
    if (file.cxx11abi && want.cxx11abi && *file.cxx11abi != *want.cxx11abi) return false;
    return true;
}

int specificity(const build_variant& file, const selector& wanted) noexcept {
    const auto& want = wanted.constraints;
    int score = 0;
    // A dimension the file pins down that the user asked about counts most. One the file pins
    // that the user left open costs: such a file fits only the machines that happen to match
    // it, so a build for every GPU is the better answer to "cu130-torch2.10" than an sm89 one.
    // Within a dimension, a more precise version ("2.10.0" over "2.10") breaks ties.
    auto dimension = [&](bool file_has, bool wanted_has, int file_precision) {
        if (file_has && wanted_has) score += 1000 + file_precision;
        else if (file_has) score -= 100;
    };
    dimension(file.cuda.has_value(), want.cuda.has_value(), precision(file.cuda));
    dimension(file.rocm.has_value(), want.rocm.has_value(), precision(file.rocm));
    dimension(file.cpu, want.cpu, 0);
    dimension(file.xpu, want.xpu, 0);
    // A build for this torch beats a lower bound that also runs on it, however precisely either
    // is spelled: "2.11.0andhigher" must not outscore "2.11" by its extra part.
    constexpr int exact_torch_bonus = 10;  // above any torch precision (at most 3 parts)
    dimension(file.torch.has_value(), want.torch.has_value(),
              precision(file.torch) + (file.torch_and_higher ? 0 : exact_torch_bonus));
    // A build for exactly this GPU beats a fat binary that also covers it.
    dimension(file.sm.has_value(), want.sm.has_value(), file.sm && file.sm->find(',') == std::string::npos ? 1 : 0);
    dimension(file.cxx11abi.has_value(), want.cxx11abi.has_value(), 0);
    return score;
}

}  // namespace wheelhouse::variants
