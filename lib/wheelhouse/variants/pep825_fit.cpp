#include "wheelhouse/variants/pep825_fit.hpp"

#include <algorithm>
#include <charconv>
#include <string>

namespace wheelhouse::variants {
namespace {

constexpr int by_name = 1000;    // a feature the selector names, met
constexpr int pinned_open = 100;  // a feature the wheel pins and the selector leaves open

struct version_pair {
    int major = 0;
    int minor = -1;  // -1: only the major is known
};

std::optional<version_pair> read_version(std::string_view text) {
    version_pair out;
    const auto dot = text.find('.');
    const auto major = text.substr(0, dot);
    if (std::from_chars(major.data(), major.data() + major.size(), out.major).ptr != major.data() + major.size() ||
        major.empty())
        return std::nullopt;
    if (dot == std::string_view::npos) return out;
    const auto minor = text.substr(dot + 1, text.find('.', dot + 1) - dot - 1);
    if (minor.empty() || std::from_chars(minor.data(), minor.data() + minor.size(), out.minor).ptr !=
                             minor.data() + minor.size())
        return std::nullopt;
    return out;
}

// The best score of a CUDA lower bound among `bounds` for the machine's CUDA, or nullopt.
std::optional<int> cuda_fit(const std::vector<std::string>& bounds, const std::optional<std::string>& machine) {
    if (!machine) return -pinned_open;
    const auto have = read_version(*machine);
    std::optional<int> best;
    for (const auto& bound : bounds) {
        const auto need = read_version(bound);
        if (!have || !need || need->major != have->major) continue;
        if (have->minor >= 0 && need->minor > have->minor) continue;
        const int score = by_name + std::max(need->minor, 0);  // the closest bound uses the most
        if (!best || score > *best) best = score;
    }
    return best;
}

// "120_real" -> SASS for "12.0"; "90a_real" -> "9.0a"; "90_virtual" -> PTX for "9.0".
struct arch_value {
    std::string arch;
    bool ptx = false;
};

std::optional<arch_value> read_arch(std::string_view value) {
    const auto underscore = value.find('_');
    const auto digits_and_suffix = value.substr(0, underscore);
    const auto kind = underscore == std::string_view::npos ? std::string_view("real") : value.substr(underscore + 1);
    if (kind != "real" && kind != "virtual") return std::nullopt;
    std::string_view digits = digits_and_suffix;
    std::string suffix;
    if (!digits.empty() && (digits.back() == 'a' || digits.back() == 'f')) {
        suffix = std::string(1, digits.back());
        digits.remove_suffix(1);
    }
    if (digits.size() < 2) return std::nullopt;
    for (char c : digits) {
        if (c < '0' || c > '9') return std::nullopt;
    }
    return arch_value{std::string(digits.substr(0, digits.size() - 1)) + "." + digits.back() + suffix, kind == "virtual"};
}

// PTX for an arch is JIT-compiled on that compute capability and every later one.
bool ptx_runs_on(const std::string& arch, std::string_view machine) {
    const auto built = read_version(arch);
    const auto gpu = read_version(machine);
    if (!built || !gpu) return false;
    return gpu->major > built->major || (gpu->major == built->major && gpu->minor >= built->minor);
}

std::optional<int> sm_fit(const std::vector<std::string>& values, const std::optional<std::string>& machine) {
    if (!machine) return -pinned_open;
    std::optional<int> best;
    for (const auto& value : values) {
        const auto arch = read_arch(value);
        if (!arch) continue;
        const bool runs = arch->ptx ? ptx_runs_on(arch->arch, *machine) : runs_on(arch->arch, *machine);
        if (!runs) continue;
        const int score = by_name + (arch->ptx ? 0 : 50);
        if (!best || score > *best) best = score;
    }
    return best;
}

}  // namespace

build_variant nvidia_variant(const pep825::variant_properties& properties) {
    build_variant out;
    const auto nvidia = properties.find("nvidia");
    if (nvidia == properties.end()) return out;
    const auto& features = nvidia->second;
    if (const auto bounds = features.find("cuda_version_lower_bound"); bounds != features.end()) {
        for (const auto& bound : bounds->second) {
            const auto read = read_version(bound);
            if (!read || read->minor < 0) continue;
            const auto best = out.cuda ? read_version(*out.cuda) : std::nullopt;
            if (!best || read->major < best->major || (read->major == best->major && read->minor < best->minor))
                out.cuda = bound;
        }
    }
    if (const auto archs = features.find("sm_arch"); archs != features.end()) {
        std::string joined;
        for (const auto& value : archs->second) {
            if (const auto arch = read_arch(value)) joined += (joined.empty() ? "" : ",") + arch->arch;
        }
        if (!joined.empty()) out.sm = joined;
    }
    return out;
}

std::optional<int> pep825_fit(const pep825::variant_properties& properties, const selector& wanted) {
    const auto nvidia = properties.find("nvidia");
    if (nvidia == properties.end()) return 0;
    const auto& want = wanted.constraints;
    if (want.cpu || want.xpu || want.rocm) return std::nullopt;
    int score = 0;
    const auto& features = nvidia->second;
    if (const auto bounds = features.find("cuda_version_lower_bound"); bounds != features.end()) {
        const auto fit = cuda_fit(bounds->second, want.cuda);
        if (!fit) return std::nullopt;
        score += *fit;
    }
    if (const auto archs = features.find("sm_arch"); archs != features.end()) {
        const auto fit = sm_fit(archs->second, want.sm);
        if (!fit) return std::nullopt;
        score += *fit;
    }
    return score;
}

}  // namespace wheelhouse::variants
