#include "wheelhouse/variants/selector.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <optional>
#include <utility>
#include <vector>

#include "wheelhouse/pep440/version.hpp"
#include "wheelhouse/text/ascii.hpp"

namespace wheelhouse::variants {
namespace {

constexpr std::string_view words_understood =
    "cuNNN (cu130, cu128, cu12, cuda12.8), rocmX.Y (rocm6.4), cpu, xpu, torchX.Y[.Z] (torch2.10), smNN (sm89, "
    "sm120, sm8.9), cxx11abi0 / cxx11abi1, joined by '-' or written together as in a wheel's label "
    "(cu130sm89torch2.10)";

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

// A GPU architecture as the decoder writes it: "8.9", "12.0", "9.0a", "10.0f".
struct compute_capability {
    unsigned major = 0;
    unsigned minor = 0;
    char suffix = 0;  // 'a' architecture-specific, 'f' family-specific, 0 plain
};

compute_capability capability_of(std::string_view arch) {
    compute_capability out;
    if (!arch.empty() && (arch.back() == 'a' || arch.back() == 'f')) {
        out.suffix = arch.back();
        arch.remove_suffix(1);
    }
    const auto parts = components(arch);
    if (!parts.empty()) out.major = parts[0];
    if (parts.size() > 1) out.minor = parts[1];
    return out;
}

// How well code for `arch` suits a GPU of compute capability `machine`, 0 when it does not run
// there: code made for exactly it with its architecture's features (4), with its family's (3),
// a family build from an earlier minor (2), plain code (1). See runs_on for the rules.
int arch_fit(std::string_view arch, const compute_capability& machine) {
    const auto built = capability_of(arch);
    if (built.major != machine.major) return 0;
    if (built.suffix == 'f') return built.minor == machine.minor ? 3 : built.minor < machine.minor ? 2 : 0;
    if (built.minor != machine.minor) return 0;
    return built.suffix == 'a' ? 4 : 1;
}

// The best arch_fit among a comma-separated list of archs.
int best_arch_fit(std::string_view archs, std::string_view machine) {
    const auto gpu = capability_of(machine);
    int best = 0;
    while (true) {
        const auto comma = archs.find(',');
        best = std::max(best, arch_fit(archs.substr(0, comma), gpu));
        if (comma == std::string_view::npos) return best;
        archs.remove_prefix(comma + 1);
    }
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

// The words of a selector, one per axis it names, in canonical order.
std::vector<std::string> words_of(const build_variant& c) {
    std::vector<std::string> words;
    if (c.cuda) words.push_back(cuda_word(*c.cuda));
    if (c.rocm) words.push_back("rocm" + *c.rocm);
    if (c.cpu) words.emplace_back("cpu");
    if (c.xpu) words.emplace_back("xpu");
    if (c.torch) words.push_back("torch" + *c.torch);
    if (c.sm) {
        std::string archs;  // several only in a selector made from a fat binary, which none parses to
        for (std::string_view rest = *c.sm;;) {
            const auto comma = rest.find(',');
            archs += (archs.empty() ? "" : ".") + sm_word(rest.substr(0, comma));
            if (comma == std::string_view::npos) break;
            rest.remove_prefix(comma + 1);
        }
        words.push_back(std::move(archs));
    }
    if (c.cxx11abi) words.push_back(*c.cxx11abi ? "cxx11abi1" : "cxx11abi0");
    return words;
}

std::string joined(const std::vector<std::string>& words, char separator) {
    std::string out;
    for (const auto& word : words) {
        if (!out.empty()) out.push_back(separator);
        out += word;
    }
    return out;
}

error unknown_word(std::string_view word) {
    return make_error(error_kind::not_found, "unknown variant selector word '" + std::string(word) +
                                                 "'; use one word each of: " + std::string(words_understood));
}

// The axes a selector names, each at most once: a machine has one accelerator (CUDA, ROCm,
// cpu or xpu), one torch, one GPU, one C++ ABI.
enum class axis { accelerator, torch, sm, cxx11abi };
constexpr std::size_t axis_count = 4;

// One value a word names: a variant with `on` alone set.
struct named_value {
    axis on;
    build_variant value;
};

// Copies the fields of axis `on` from `from` into `into`, replacing what `into` held there.
void put(build_variant& into, axis on, const build_variant& from) {
    switch (on) {
    case axis::accelerator:
        into.cuda = from.cuda;
        into.rocm = from.rocm;
        into.cpu = from.cpu;
        into.xpu = from.xpu;
        break;
    case axis::torch: into.torch = from.torch; break;
    case axis::sm: into.sm = from.sm; break;
    case axis::cxx11abi: into.cxx11abi = from.cxx11abi; break;
    }
}

build_variant only(axis on, const build_variant& from) {
    build_variant out;
    put(out, on, from);
    return out;
}

// Each value a decoded word names; "cu130cpu" names two accelerators, a fat "8.0,9.0" two GPUs.
std::vector<named_value> values_of(const build_variant& decoded) {
    std::vector<named_value> out;
    auto add = [&out](axis on) -> build_variant& { return out.emplace_back(named_value{on, {}}).value; };
    if (decoded.cuda) add(axis::accelerator).cuda = decoded.cuda;
    if (decoded.rocm) add(axis::accelerator).rocm = decoded.rocm;
    if (decoded.cpu) add(axis::accelerator).cpu = true;
    if (decoded.xpu) add(axis::accelerator).xpu = true;
    if (decoded.torch) add(axis::torch).torch = decoded.torch;
    const std::string archs = decoded.sm.value_or("");
    for (std::string_view rest = archs; !rest.empty();) {
        const auto comma = rest.find(',');
        add(axis::sm).sm = std::string(rest.substr(0, comma));
        rest.remove_prefix(comma == std::string_view::npos ? rest.size() : comma + 1);
    }
    if (decoded.cxx11abi) add(axis::cxx11abi).cxx11abi = decoded.cxx11abi;
    return out;
}

bool names_axis(const build_variant& variant, axis on) {
    switch (on) {
    case axis::accelerator: return accelerator_of(variant) != accelerator::none;
    case axis::torch: return variant.torch.has_value();
    case axis::sm: return variant.sm.has_value();
    case axis::cxx11abi: return variant.cxx11abi.has_value();
    }
    return false;
}

// Whether a decoded piece names the machine and nothing else a selector cannot ask for.
bool names_machine_only(const build_variant& decoded) {
    return speaks_to_machine(decoded) && !decoded.git_hash && !decoded.build_date && !decoded.torch_and_higher;
}

bool starts_with_torch(std::string_view word) { return text::to_lower(word.substr(0, 5)) == "torch"; }

// torch.__version__'s public version ("2.10.0", "2.9.0.dev20250716", with or without "torch"),
// as the torch its release's first three parts name.
std::optional<build_variant> torch_of_version(std::string_view word) {
    if (starts_with_torch(word)) word.remove_prefix(5);
    const auto version = pep440::parse(word);
    if (!version || !version->local.empty() || version->release.size() < 2) return std::nullopt;
    std::string label = "torch";
    for (std::size_t part = 0; part < std::min<std::size_t>(version->release.size(), 3); ++part)
        label += (part ? "." : "") + std::to_string(version->release[part]);
    auto decoded = decode_local_label(label);  // keeps to what a label may say: "torch2.123" is nothing
    if (!decoded.torch || !decoded.unparsed.empty()) return std::nullopt;
    return decoded;
}

// The values one word names. Its tokens are decoded as a wheel's label would be; a word before
// a '+', or after "torch", may be torch.__version__'s version ("2.9.0.dev20250716+cu128").
result<std::vector<named_value>> read_word(std::string_view word, bool before_plus) {
    auto decoded = decode_local_label(word);
    if (!names_machine_only(decoded) || !decoded.unparsed.empty()) {
        auto torch = torch_of_version(word);
        if (torch && (before_plus || starts_with_torch(word))) decoded = std::move(*torch);
        else if (torch) {
            return make_error(error_kind::not_found, "write torch" + *torch->torch + " for a torch version: '" +
                                                         std::string(word) + "' alone is no variant selector word");
        }
    }
    if (!names_machine_only(decoded)) return unknown_word(word);
    auto values = values_of(decoded);
    // The decoder keeps a second, different value unparsed ("cu130cu128"): a value still.
    for (const auto& piece : decoded.unparsed) {
        const auto again = decode_local_label(piece);
        if (!names_machine_only(again) || !again.unparsed.empty()) return unknown_word(word);
        for (auto& value : values_of(again)) values.push_back(std::move(value));
    }
    for (auto& [on, value] : values) {
        if (on != axis::sm) continue;
        const auto gpu = capability_of(*value.sm);
        if (gpu.suffix == 'f') {
            return invalid("'" + std::string(word) + "' names a family of GPUs, not one: name yours by its compute "
                           "capability (nvidia-smi --query-gpu=compute_cap prints 10.3 for sm103), and the builds "
                           "for its family are listed for it");
        }
        // sm90a code runs on a compute capability 9.0, which is what the word asks for.
        if (gpu.suffix == 'a') value.sm->pop_back();
    }
    return values;
}

// Keeps in `slot` the more precise of it and `value` when they agree ("12" and "12.8": 12.8).
bool keep_agreed(std::optional<std::string>& slot, const std::string& value) {
    if (!slot) slot = value;
    else if (!same_family(*slot, value)) return false;
    else if (precision(value) > precision(slot)) slot = value;
    return true;
}

// Adds `named` to `merged` when it agrees with what is there: the same value again, or one
// more precise ("cu12" and torch.__version__'s "+cu128"). False when they disagree.
bool merge(build_variant& merged, const named_value& named) {
    const auto& value = named.value;
    switch (named.on) {
    case axis::accelerator:
        if (accelerator_of(merged) == accelerator::none) put(merged, axis::accelerator, value);
        if (accelerator_of(merged) != accelerator_of(value)) return false;
        if (value.cuda) return keep_agreed(merged.cuda, *value.cuda);
        if (value.rocm) return keep_agreed(merged.rocm, *value.rocm);
        return true;
    case axis::torch: return keep_agreed(merged.torch, *value.torch);
    case axis::sm:
        if (!merged.sm) merged.sm = value.sm;
        return merged.sm == value.sm;
    case axis::cxx11abi:
        if (!merged.cxx11abi) merged.cxx11abi = value.cxx11abi;
        return merged.cxx11abi == value.cxx11abi;
    }
    return false;
}

// The first value that disagreed with what the selector had named on its axis, and which of
// the two torch.__version__ gave.
struct disagreement {
    named_value second;
    bool first_from_version = false;
    bool second_from_version = false;
};

std::string_view named_twice(axis on, const build_variant& first, const build_variant& second) {
    switch (on) {
    case axis::accelerator:
        if (first.cuda && second.cuda) return "a CUDA version twice";
        if (first.rocm && second.rocm) return "a ROCm version twice";
        return "more than one of CUDA, ROCm, cpu and xpu";
    case axis::torch: return "a torch version twice";
    case axis::sm: return "a GPU architecture twice";
    case axis::cxx11abi: return "the C++ ABI twice";
    }
    return "an axis twice";
}

std::string canonical_of(const build_variant& constraints) { return selector{constraints}.canonical(); }

// Refuses a selector that disagrees with itself, leading with the spellings that keep one
// value or the other; torch.__version__'s first, since torch was built with it.
error disagreeing(std::string_view text, const build_variant& merged, const disagreement& found) {
    const auto on = found.second.on;
    build_variant other = merged;
    put(other, on, found.second.value);
    const bool version_decides = found.first_from_version != found.second_from_version;
    std::string fixes;
    auto offer = [&](const build_variant& variant, bool from_version) {
        auto spelling = canonical_of(variant);
        if (!parse_selector(spelling)) return;  // a second problem remains in it
        fixes += (fixes.empty() ? "use " : " or ") + spelling;
        if (version_decides && from_version) fixes += " (what torch.__version__ says)";
    };
    const bool other_first = found.second_from_version && version_decides;
    offer(other_first ? other : merged, other_first || found.first_from_version);
    offer(other_first ? merged : other, !other_first && found.second_from_version);
    return invalid((fixes.empty() ? "keep one" : fixes) + ": the variant selector '" + std::string(text) + "' names " +
                   std::string(named_twice(on, merged, found.second.value)) + " (" + canonical_of(only(on, merged)) +
                   " and " + canonical_of(found.second.value) + "), and a machine has one");
}

}  // namespace

std::string cuda_word(std::string_view cuda) {
    const std::string compact = "cu" + digits_of(cuda);
    if (cuda.find('.') == std::string_view::npos || decode_local_label(compact).cuda == cuda) return compact;
    return "cu" + std::string(cuda);
}

std::string sm_word(std::string_view arch) { return "sm" + digits_of(arch); }

std::string selector::canonical() const { return joined(words_of(constraints), '-'); }

std::vector<std::string> other_spellings(const selector& wanted) {
    const auto& c = wanted.constraints;
    const auto canonical = wanted.canonical();
    const auto words = words_of(c);
    // One axis's word, or "" when the selector leaves it open.
    auto word_of = [&c](auto... fields) {
        selector one;
        ((one.constraints.*fields = c.*fields), ...);
        return one.canonical();
    };
    const auto accelerator = word_of(&build_variant::cuda, &build_variant::rocm, &build_variant::cpu, &build_variant::xpu);
    const auto torch = word_of(&build_variant::torch);
    const auto sm = word_of(&build_variant::sm);
    const auto abi = word_of(&build_variant::cxx11abi);
    auto replaced = [&](const std::string& from, const std::string& to) {
        auto copy = words;
        std::replace(copy.begin(), copy.end(), from, to);
        return joined(copy, '-');
    };

    std::vector<std::string> candidates{
        accelerator + sm + torch + abi,  // as a wheel's label writes its tokens: cu130sm89torch2.10
        joined(words, '_'),
    };
    if (!accelerator.empty() && !torch.empty()) {  // as torch.__version__ writes it: 2.10.0+cu130
        std::vector<std::string> rest{torch + "+" + accelerator};
        for (const auto& word : {sm, abi}) {
            if (!word.empty()) rest.push_back(word);
        }
        candidates.push_back(joined(rest, '-'));
    }
    if (c.sm) candidates.push_back(replaced(sm, "sm" + *c.sm));  // as nvidia-smi prints it: 8.9
    if (c.cuda && c.cuda->find('.') != std::string::npos) candidates.push_back(replaced(accelerator, "cuda" + *c.cuda));

    std::vector<std::string> out;
    for (auto& spelling : candidates) {
        if (spelling == canonical || std::find(out.begin(), out.end(), spelling) != out.end()) continue;
        const auto again = parse_selector(spelling);
        if (again && again->canonical() == canonical) out.push_back(std::move(spelling));
    }
    return out;
}

bool runs_on(std::string_view archs, std::string_view machine) noexcept { return best_arch_fit(archs, machine) > 0; }

bool speaks_to_machine(const build_variant& v) noexcept {
    return v.cuda || v.sm || v.torch || v.cxx11abi || v.rocm || v.cpu || v.xpu;
}

result<selector> parse_selector(std::string_view text) {
    if (text.empty()) return invalid("the variant selector is empty; use words such as cu130-torch2.10");
    if (text.size() > max_selector_length)
        return invalid("the variant selector is longer than " + std::to_string(max_selector_length) + " characters");
    selector out;
    auto& merged = out.constraints;
    std::optional<disagreement> first_disagreement;
    std::array<bool, axis_count> from_version{};  // each axis's value came from torch.__version__
    // A wheel's label copied with its '+' ("+cu130sm89torch2.10.0").
    std::string_view rest = text.front() == '+' ? text.substr(1) : text;
    bool after_plus = false;
    while (true) {
        const auto separator = rest.find_first_of("-+");
        const auto word = rest.substr(0, separator);
        const bool before_plus = separator != std::string_view::npos && rest[separator] == '+';
        if (word.empty()) return invalid("the variant selector '" + std::string(text) + "' has an empty word");
        auto values = read_word(word, before_plus);
        if (!values) return values.error();
        // torch.__version__ ("2.10.0+cu130") is the word before a '+' and the one after it.
        const bool version_word = before_plus || after_plus;
        for (auto& named : *values) {
            auto& axis_from_version = from_version[static_cast<std::size_t>(named.on)];
            const bool first_on_axis = !names_axis(merged, named.on);
            if (merge(merged, named)) {
                if (first_on_axis) axis_from_version = version_word;
            } else if (!first_disagreement) {
                first_disagreement = disagreement{std::move(named), axis_from_version, version_word};
            }
        }
        if (separator == std::string_view::npos) break;
        after_plus = before_plus;
        rest.remove_prefix(separator + 1);
    }
    if (first_disagreement) return disagreeing(text, merged, *first_disagreement);
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
    if (file.sm && want.sm && !runs_on(*file.sm, *want.sm)) return false;
    if (file.cxx11abi && want.cxx11abi && *file.cxx11abi != *want.cxx11abi) return false;
    return true;
}

bool made_for(const build_variant& file, const selector& wanted) noexcept {
    const auto& want = wanted.constraints;
    const bool names_each = (!want.cuda || file.cuda) && (!want.rocm || file.rocm) && (!want.cpu || file.cpu) &&
                            (!want.xpu || file.xpu) && (!want.torch || file.torch) && (!want.sm || file.sm) &&
                            (!want.cxx11abi || file.cxx11abi);
    return names_each && satisfies(file, wanted);
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
    // A build for exactly this GPU beats one for its family, then plain code; a single arch a
    // fat binary that also covers it.
    const int single_arch = file.sm && file.sm->find(',') == std::string::npos ? 1 : 0;
    dimension(file.sm.has_value(), want.sm.has_value(),
              file.sm && want.sm ? 2 * best_arch_fit(*file.sm, *want.sm) + single_arch : 0);
    dimension(file.cxx11abi.has_value(), want.cxx11abi.has_value(), 0);
    return score;
}

}  // namespace wheelhouse::variants
