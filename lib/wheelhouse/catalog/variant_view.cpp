#include "wheelhouse/catalog/variant_view.hpp"

#include <algorithm>
#include <charconv>
#include <limits>
#include <map>
#include <optional>
#include <tuple>
#include <unordered_map>

#include "wheelhouse/pep440/version.hpp"
#include "wheelhouse/variants/pep825_fit.hpp"

namespace wheelhouse::catalog {
namespace {

using variants::build_variant;
using variants::selector;

// Files that compete for one place on a page: the same release and the same tags, so pip takes
// whichever ranks highest. The build tag is no part of it: pip compares build tags only between
// files of equal version, so builds that differ in it compete too (and for SageAttention's
// "280.129" the build tag is the variant itself).
// PEP 825 variant wheels compete only with each other: they are told apart by their variant
// label, which installers that know them read, and pip skips them.
using slot_key = std::tuple<std::string, std::string, std::string, std::string, bool>;

slot_key slot_of(const file_record& file) {
    return {file.normalized_version.substr(0, file.normalized_version.find('+')), file.python_tag, file.abi_tag,
            file.platform_tag, file.variant_label.has_value()};
}

// How `file` fits `wanted`, or nullopt; a PEP 825 wheel by its properties (pep825_fit).
std::optional<int> fit_of(const file_record& file, const selector& wanted) {
    if (file.variant_label) return pep825_fit(file.variant_properties, wanted);
    if (!satisfies(file.variant, wanted)) return std::nullopt;
    return specificity(file.variant, wanted);
}

// pip orders build tags by their leading number, then the rest as text.
std::pair<std::uint64_t, std::string_view> build_order(const file_record& file) {
    if (!file.build_tag) return {0, {}};
    const std::string_view tag = *file.build_tag;
    std::uint64_t number = 0;
    const auto [end, ec] = std::from_chars(tag.data(), tag.data() + tag.size(), number);
    if (ec != std::errc{}) return {0, tag};
    return {number, tag.substr(static_cast<std::size_t>(end - tag.data()))};
}

// True when pip would rank `a` above `b` among builds of one slot.
bool ranks_higher(const file_record& a, const file_record& b) {
    const auto version_a = pep440::parse(a.normalized_version);
    const auto version_b = pep440::parse(b.normalized_version);
    if (version_a && version_b) {
        const auto order = pep440::compare(*version_a, *version_b);
        if (order != 0) return order > 0;
    } else if (version_a.has_value() != version_b.has_value()) {
        return version_a.has_value();
    }
    const auto build_a = build_order(a);
    const auto build_b = build_order(b);
    if (build_a != build_b) return build_a > build_b;
    return a.filename > b.filename;
}


std::vector<std::string> split_archs(const std::string& archs) {
    std::vector<std::string> out;
    std::size_t start = 0;
    while (start <= archs.size()) {
        const auto comma = archs.find(',', start);
        out.push_back(archs.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
        if (comma == std::string::npos) break;
        start = comma + 1;
    }
    return out;
}

// The compute capabilities of the GPU families that family-specific code (sm_100f, sm_120f) is
// built for, from NVIDIA's list (developer.nvidia.com/cuda-gpus): B200 10.0, B300 10.3, Thor 11.0,
// RTX 50xx 12.0, GB10 12.1. A family build is offered to each that runs it, named by a build of
// the project or not: a B300 asks sm103 however few of its builds name 10.3.
constexpr std::string_view family_gpus[] = {"10.0", "10.3", "11.0", "12.0", "12.1"};

// "9.0a" -> "9.0": the GPU that runs an arch-specific or family build.
std::string without_suffix(std::string arch) {
    if (!arch.empty() && (arch.back() == 'a' || arch.back() == 'f')) arch.pop_back();
    return arch;
}

// Whether `name` is a selector the index reads as `constraints`, so that every selector offered
// is one that answers.
bool reads_back(const std::string& name, const build_variant& constraints) {
    const auto parsed = variants::parse_selector(name);
    return parsed && parsed->constraints == constraints;
}

std::size_t word_count(const build_variant& c) {
    return (c.cuda || c.rocm || c.cpu || c.xpu ? 1u : 0u) + (c.torch ? 1u : 0u) + (c.sm ? 1u : 0u) +
           (c.cxx11abi ? 1u : 0u);
}

// One way of asking about one axis, marked when it is the family's spelling rather than the
// build's own; without words it leaves the axis out of the selector.
struct way {
    std::optional<build_variant> words;
    bool borrowed = false;
};

// The ways of `asked` that the build fits on its own, each once, after the way that leaves the
// axis out; those from `own` on are borrowed.
std::vector<way> ways_fitting(const build_variant& variant, std::vector<build_variant> asked, std::size_t own) {
    std::vector<way> out{{}};
    for (std::size_t at = 0; at < asked.size(); ++at) {
        const bool seen = std::any_of(out.begin(), out.end(), [&](const way& w) { return w.words == asked[at]; });
        if (!seen && satisfies(variant, selector{asked[at]})) out.push_back({std::move(asked[at]), at >= own});
    }
    return out;
}

// The accelerator as the build names it, and for CUDA the family's other spellings: "cu12"
// for a cu128 build, and for a cu12 build each 12.x the project names ("cu128").
std::vector<build_variant> accelerator_words(const build_variant& variant, const family_versions& named) {
    std::vector<build_variant> accelerators;
    if (variant.cuda) {
        std::vector<std::string> cudas{*variant.cuda, variant.cuda->substr(0, variant.cuda->find('.'))};
        cudas.insert(cudas.end(), named.cuda.begin(), named.cuda.end());
        for (auto& cuda : cudas) accelerators.emplace_back().cuda = std::move(cuda);
    } else if (variant.rocm) {
        accelerators.emplace_back().rocm = variant.rocm;
    } else if (variant.xpu) {
        accelerators.emplace_back().xpu = true;
    } else if (variant.cpu) {
        accelerators.emplace_back().cpu = true;
    }
    return accelerators;
}

// torch major.minor, and for a lower bound each later torch the project names.
std::vector<build_variant> torch_words(const build_variant& variant, const family_versions& named) {
    std::vector<build_variant> torches;
    if (variant.torch) {
        torches.emplace_back().torch = torch_family(*variant.torch);
        for (const auto& torch : named.torch) torches.emplace_back().torch = torch;
    }
    return torches;
}

// Each GPU that runs an SM of the build (of a fat binary, each on its own): its compute
// capability, and for a family build each later one of the family the project names.
// parse_selector refuses an SM beside ROCm, cpu or xpu.
std::vector<build_variant> arch_words(const build_variant& variant, const family_versions& named) {
    std::vector<build_variant> archs;
    const bool other_accelerator = !variant.cuda && (variant.rocm || variant.xpu || variant.cpu);
    if (!variant.sm || other_accelerator) return archs;
    for (auto& arch : split_archs(*variant.sm)) {
        const bool family = arch.back() == 'f';
        archs.emplace_back().sm = without_suffix(std::move(arch));
        if (!family) continue;
        // ways_fitting() keeps those it runs on.
        for (const auto& gpu : named.sm) archs.emplace_back().sm = gpu;
        for (const auto gpu : family_gpus) archs.emplace_back().sm = std::string(gpu);
    }
    return archs;
}

std::vector<build_variant> abi_words(const build_variant& variant) {
    std::vector<build_variant> abis;
    if (variant.cxx11abi) abis.emplace_back().cxx11abi = variant.cxx11abi;
    return abis;
}

struct candidate {
    selector words;
    std::size_t word_count;
    int borrowed;
    std::string name;
};

// Every selector of one way per axis that names something and reads back as itself.
std::vector<candidate> combine(const std::vector<way>& accelerators, const std::vector<way>& torches,
                               const std::vector<way>& archs, const std::vector<way>& abis) {
    std::vector<candidate> found;
    for (const auto& accelerator : accelerators) {
        for (const auto& torch : torches) {
            for (const auto& arch : archs) {
                for (const auto& abi : abis) {
                    selector words;
                    auto& c = words.constraints;
                    if (accelerator.words) c = *accelerator.words;
                    if (torch.words) c.torch = torch.words->torch;
                    if (arch.words) c.sm = arch.words->sm;
                    if (abi.words) c.cxx11abi = abi.words->cxx11abi;
                    const auto words_used = word_count(c);
                    if (words_used == 0) continue;
                    auto name = words.canonical();
                    if (!reads_back(name, c)) continue;
                    const int borrowed = (accelerator.borrowed ? 1 : 0) + (torch.borrowed ? 1 : 0);
                    found.push_back({std::move(words), words_used, borrowed, std::move(name)});
                }
            }
        }
    }
    return found;
}

}  // namespace

std::vector<std::size_t> listed_files(std::span<const file_record> files, const selector& wanted) {
    struct best_fit {
        std::size_t index;
        int score;
    };
    std::vector<std::size_t> listed;
    std::map<slot_key, best_fit> best_by_slot;
    const bool variant_builds = std::any_of(files.begin(), files.end(), [](const file_record& file) {
        return file.variant_label || speaks_to_machine(file.variant);
    });
    for (std::size_t index = 0; index < files.size(); ++index) {
        const auto& file = files[index];
        if (file.type == package_type::sdist) {
            if (!variant_builds) listed.push_back(index);
            continue;
        }
        if (!file.variant_label && !speaks_to_machine(file.variant)) {
            listed.push_back(index);
            continue;
        }
        const auto fit = fit_of(file, wanted);
        if (!fit) continue;
        const int score = *fit;
        auto [slot, inserted] = best_by_slot.try_emplace(slot_of(file), best_fit{index, score});
        if (inserted) continue;
        auto& best = slot->second;
        if (score > best.score || (score == best.score && ranks_higher(file, files[best.index]))) best = {index, score};
    }
    for (const auto& [slot, best] : best_by_slot) listed.push_back(best.index);
    std::sort(listed.begin(), listed.end());
    return listed;
}

family_versions versions_named(std::span<const file_record> files) {
    family_versions out;
    for (const auto& file : files) {
        if (file.variant.cuda) out.cuda.push_back(*file.variant.cuda);
        if (file.variant.torch) out.torch.push_back(torch_family(*file.variant.torch));
        if (file.variant.sm) {
            for (auto& arch : split_archs(*file.variant.sm)) out.sm.push_back(without_suffix(std::move(arch)));
        }
    }
    for (auto* list : {&out.cuda, &out.torch, &out.sm}) {
        std::sort(list->begin(), list->end());
        list->erase(std::unique(list->begin(), list->end()), list->end());
    }
    return out;
}

std::vector<selector> candidate_selectors(const build_variant& variant, const family_versions& named) {
    if (!speaks_to_machine(variant)) return {};
    constexpr auto all_own = std::numeric_limits<std::size_t>::max();
    auto found = combine(ways_fitting(variant, accelerator_words(variant, named), 1),
                         ways_fitting(variant, torch_words(variant, named), 1),
                         ways_fitting(variant, arch_words(variant, named), all_own),
                         ways_fitting(variant, abi_words(variant), all_own));
    // Most words first; among as many, the build's own spellings before the family's.
    std::sort(found.begin(), found.end(), [](const candidate& a, const candidate& b) {
        if (a.word_count != b.word_count) return a.word_count > b.word_count;
        if (a.borrowed != b.borrowed) return a.borrowed < b.borrowed;
        return a.name < b.name;
    });
    std::vector<selector> out;
    out.reserve(found.size());
    for (auto& one : found) out.push_back(std::move(one.words));
    return out;
}

std::vector<std::vector<std::string>> reaching_selectors(std::span<const file_record> files) {
    // One listing per distinct candidate, shared by every build that proposes it.
    std::unordered_map<std::string, std::vector<std::size_t>> listings;
    const auto named = versions_named(files);
    std::vector<std::vector<std::string>> out(files.size());
    for (std::size_t index = 0; index < files.size(); ++index) {
        const auto& file = files[index];
        const auto proposing = file.variant_label ? variants::nvidia_variant(file.variant_properties) : file.variant;
        for (const auto& candidate : candidate_selectors(proposing, named)) {
            auto name = candidate.canonical();
            auto found = listings.find(name);
            if (found == listings.end()) found = listings.emplace(name, listed_files(files, candidate)).first;
            if (std::binary_search(found->second.begin(), found->second.end(), index))
                out[index].push_back(std::move(name));
        }
    }
    return out;
}

std::string torch_family(std::string_view torch) {
    const auto first = torch.find('.');
    if (first == std::string_view::npos) return std::string(torch);
    return std::string(torch.substr(0, torch.find('.', first + 1)));
}

std::string family_label(const build_variant& variant) {
    std::vector<std::string> words;
    selector accelerator;
    accelerator.constraints.cuda = variant.cuda;
    accelerator.constraints.rocm = variant.rocm;
    accelerator.constraints.cpu = variant.cpu;
    accelerator.constraints.xpu = variant.xpu;
    if (auto word = accelerator.canonical(); !word.empty()) words.push_back(std::move(word));
    if (variant.torch) {
        words.push_back(variant.torch_and_higher ? "torch" + *variant.torch + "andhigher"
                                                 : "torch" + torch_family(*variant.torch));
    }
    if (variant.sm) {
        std::string archs;
        for (const auto& arch : split_archs(*variant.sm)) archs += (archs.empty() ? "" : ",") + variants::sm_word(arch);
        words.push_back(std::move(archs));
    }
    if (variant.cxx11abi) words.emplace_back(*variant.cxx11abi ? "cxx11abi1" : "cxx11abi0");
    std::string label;
    for (const auto& word : words) label += (label.empty() ? "" : " · ") + word;
    return label;
}

}  // namespace wheelhouse::catalog
