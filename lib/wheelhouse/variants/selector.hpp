#pragma once
// Variant selectors: "cu130-torch2.10-sm89" asks for the builds that fit one machine. Each
// '-'-separated word is read by the same decoder as a local label, so a selector speaks exactly
// the language wheels are named in.

#include <string>
#include <string_view>

#include "wheelhouse/result.hpp"
#include "wheelhouse/variants/build_variant.hpp"

namespace wheelhouse::variants {

struct selector {
    build_variant constraints;  // the machine the user describes

    // One spelling per meaning ("torch2.10-cu130" -> "cu130-torch2.10"), for redirects and
    // cache keys.
    std::string canonical() const;
};

inline constexpr std::size_t max_selector_length = 120;

// Errors: an unknown word is not_found (the message lists the words understood); empty
// words, contradictions ("cu130-cu128", "cu130-cpu") and over-long selectors are invalid.
result<selector> parse_selector(std::string_view text);

// True when `variant` says something about the machine (CUDA, ROCm, CPU, XPU, torch, SM,
// C++ ABI); a git hash or build date alone does not.
bool speaks_to_machine(const build_variant& variant) noexcept;

// True when every constraint the file's variant speaks to is met: a torch lower bound
// ("torch2.10.0andhigher") meets any later torch, a CUDA major ("cu12") any 12.x, a file with
// several SM archs meets any of them; accelerators (CUDA, ROCm, CPU, XPU) exclude each other.
bool satisfies(const build_variant& file, const selector& wanted) noexcept;

// How closely a fitting file matches: higher is better. Each constraint the file meets by
// name counts, each machine property it pins that the selector leaves open counts against it,
// an exact torch build beats a torch lower bound, and precision breaks the remaining ties.
// Used to keep one best fit among files that differ only in their local label.
int specificity(const build_variant& file, const selector& wanted) noexcept;

}  // namespace wheelhouse::variants
