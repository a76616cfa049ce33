#include "wheelhouse/variants/variant_view.hpp"

#include <algorithm>
#include <charconv>
#include <map>
#include <optional>
#include <tuple>
#include <unordered_map>

#include "wheelhouse/pep440/version.hpp"

namespace wheelhouse::variants {
namespace {

using catalog::file_record;

// Files that compete for one place on a page: the same release and the same tags, so pip takes
// whichever ranks highest. The build tag is no part of it: pip compares build tags only between
// files of equal version, so builds that differ in it compete too (and for SageAttention's
// "280.129" the build tag is the variant itself).
using slot_key = std::tuple<std::string, std::string, std::string, std::string>;

slot_key slot_of(const file_record& file) {
    return {file.normalized_version.substr(0, file.normalized_version.find('+')), file.python_tag, file.abi_tag,
            file.platform_tag};
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

std::string major_minor(const std::string& dotted) {
    const auto first = dotted.find('.');
    if (first == std::string::npos) return dotted;
    return dotted.substr(0, dotted.find('.', first + 1));
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

std::size_t word_count(const build_variant& c) {
    return (c.cuda || c.rocm || c.cpu || c.xpu ? 1u : 0u) + (c.torch ? 1u : 0u) + (c.sm ? 1u : 0u) +
           (c.cxx11abi ? 1u : 0u);
}

}  // namespace

std::vector<std::size_t> listed_files(std::span<const file_record> files, const selector& wanted) {
    struct best_fit {
        std::size_t index;
        int score;
    };
    std::vector<std::size_t> listed;
    std::map<slot_key, best_fit> best_by_slot;
    for (std::size_t index = 0; index < files.size(); ++index) {
        const auto& file = files[index];
        if (!speaks_to_machine(file.variant)) {
            listed.push_back(index);
            continue;
        }
        if (!satisfies(file.variant, wanted)) continue;
        const int score = specificity(file.variant, wanted);
        auto [slot, inserted] = best_by_slot.try_emplace(slot_of(file), best_fit{index, score});
        if (inserted) continue;
        auto& best = slot->second;
        if (score > best.score || (score == best.score && ranks_higher(file, files[best.index]))) best = {index, score};
    }
    for (const auto& [slot, best] : best_by_slot) listed.push_back(best.index);
    std::sort(listed.begin(), listed.end());
    return listed;
}

std::vector<selector> candidate_selectors(const build_variant& variant) {
    if (!speaks_to_machine(variant)) return {};
    build_variant accelerator;
    accelerator.cuda = variant.cuda;
    if (!variant.cuda) {
        accelerator.rocm = variant.rocm;
        if (!variant.rocm) {
            accelerator.xpu = variant.xpu;
            accelerator.cpu = !variant.xpu && variant.cpu;
        }
    }
    const bool has_accelerator = accelerator.cuda || accelerator.rocm || accelerator.cpu || accelerator.xpu;
    // parse_selector refuses an SM beside ROCm, cpu or xpu; so must we.
    std::vector<std::optional<std::string>> archs{std::nullopt};
    if (variant.sm && (!has_accelerator || accelerator.cuda)) {
        for (auto& arch : split_archs(*variant.sm)) archs.emplace_back(std::move(arch));
    }

    std::vector<selector> out;
    for (const bool use_accelerator : {false, true}) {
        if (use_accelerator && !has_accelerator) continue;
        for (const bool use_torch : {false, true}) {
            if (use_torch && !variant.torch) continue;
            for (const auto& arch : archs) {
                for (const bool use_abi : {false, true}) {
                    if (use_abi && !variant.cxx11abi) continue;
                    selector candidate;
                    auto& c = candidate.constraints;
                    if (use_accelerator) c = accelerator;
                    if (use_torch) c.torch = major_minor(*variant.torch);
                    c.sm = arch;
                    if (use_abi) c.cxx11abi = variant.cxx11abi;
                    if (word_count(c) > 0) out.push_back(std::move(candidate));
                }
            }
        }
    }
    std::sort(out.begin(), out.end(), [](const selector& a, const selector& b) {
        const auto words_a = word_count(a.constraints);
        const auto words_b = word_count(b.constraints);
        if (words_a != words_b) return words_a > words_b;
        return a.canonical() < b.canonical();
    });
    return out;
}

std::vector<std::vector<std::string>> reaching_selectors(std::span<const file_record> files) {
    // One listing per distinct candidate, shared by every build that proposes it.
    std::unordered_map<std::string, std::vector<std::size_t>> listings;
    std::vector<std::vector<std::string>> out(files.size());
    for (std::size_t index = 0; index < files.size(); ++index) {
        for (const auto& candidate : candidate_selectors(files[index].variant)) {
            auto name = candidate.canonical();
            auto found = listings.find(name);
            if (found == listings.end()) found = listings.emplace(name, listed_files(files, candidate)).first;
            if (std::binary_search(found->second.begin(), found->second.end(), index))
                out[index].push_back(std::move(name));
        }
    }
    return out;
}

}  // namespace wheelhouse::variants
