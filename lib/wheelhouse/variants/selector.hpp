#pragma once
// Variant selectors: "cu130-torch2.10-sm89" asks for the builds that fit one machine. Each
// '-'-separated word is read by the same decoder as a local label, so a selector speaks exactly
// the language wheels are named in.

#include <string>
#include <string_view>
#include <vector>

#include "wheelhouse/result.hpp"
#include "wheelhouse/variants/build_variant.hpp"

namespace wheelhouse::variants {

struct selector {
    build_variant constraints;  // the machine the user describes; sm is one compute capability

    // One spelling per meaning ("torch2.10-cu130" -> "cu130-torch2.10"), for redirects and
    // cache keys: the words below, joined by '-' in the order accelerator, torch, SM, ABI.
    // parse_selector reads it back as the same constraints.
    std::string canonical() const;
};

inline constexpr std::size_t max_selector_length = 120;

// Words are separated by '-' (or '+', as torch.__version__ writes "2.10.0+cu130"); a word may
// hold several tokens written together as in a wheel's local label ("cu130sm89torch2.10.0", with
// or without its '+'; "cu130_torch2.10"), each read by the label decoder, so "sm8.9" (what
// nvidia-smi prints), "sm_89" and "cuda12.8" are understood too. "sm90a" names the GPU that runs
// sm_90a code, a compute capability 9.0: it is read as sm90.
// Errors: an unknown word is not_found (the message lists the words understood); empty
// words, contradictions ("cu130-cu128", "cu130-cpu"), a GPU family ("sm100f": which GPU of it?)
// and over-long selectors are invalid.
result<selector> parse_selector(std::string_view text);

// The selector words for one value, as canonical() writes them: each is the spelling the label
// decoder reads back as that value. CUDA "13.0" -> "cu130", "12" -> "cu12", "12.10" -> "cu12.10"
// (cu1210 would read as nothing); an architecture "8.9" -> "sm89", "9.0a" -> "sm90a".
std::string cuda_word(std::string_view cuda);
std::string sm_word(std::string_view arch);

// Other spellings of `wanted` that parse_selector reads as the same selector (the index answers
// them with a 301 to canonical()): the tokens written together as in a wheel's label
// ("cu130sm89torch2.10"), words joined by '_', torch first as torch.__version__ writes it
// ("torch2.10+cu130-sm89"), the compute capability as nvidia-smi prints it ("sm8.9"), CUDA
// with its dot ("cuda13.0"). Never canonical() itself; each at most once.
std::vector<std::string> other_spellings(const selector& wanted);

// Whether code built for `archs` (one or several, "8.0,9.0a") runs on a GPU of compute
// capability `machine` ("9.0"; a suffix on it is ignored). NVIDIA's CUDA Programming Guide,
// "Feature Availability" (docs.nvidia.com/cuda/cuda-programming-guide/05-appendices/
// compute-capabilities.html#feature-availability): architecture-specific code (sm_90a, sm_100a)
// runs only on exactly that compute capability; family-specific code (sm_100f, sm_120f, CUDA
// 12.9 on) on devices of the same major with an equal or higher minor (sm_100f on 10.0 and
// 10.3, not 11.x). A plain arch is taken as written for exactly its compute capability.
bool runs_on(std::string_view archs, std::string_view machine) noexcept;

// True when `variant` says something about the machine (CUDA, ROCm, CPU, XPU, torch, SM,
// C++ ABI); a git hash or build date alone does not.
bool speaks_to_machine(const build_variant& variant) noexcept;

// True when every constraint the file's variant speaks to is met: a torch lower bound
// ("torch2.10.0andhigher") meets any later torch, a CUDA major ("cu12") any 12.x, a file's SM
// archs the wanted GPU when one of them runs on it (runs_on: sm90a on sm90, sm100f on sm103);
// accelerators (CUDA, ROCm, CPU, XPU) exclude each other.
bool satisfies(const build_variant& file, const selector& wanted) noexcept;

// True when the file is a build made for everything `wanted` names: it names each of those
// axes too, and satisfies() them (a cu13 build is made for cu130, an sm90a build for sm90, a
// torch2.9.0andhigher build for torch2.10; a torch-only build is made for no CUDA). What the
// admin catalog means by "a project with a cu130 build".
bool made_for(const build_variant& file, const selector& wanted) noexcept;

// How closely a fitting file matches: higher is better. Each constraint the file meets by
// name counts, each machine property it pins that the selector leaves open counts against it,
// an exact torch build beats a torch lower bound, of the SM archs that run on the GPU one made
// for exactly it beats a family's (sm90a, then sm100f on 10.0, then sm100f on 10.3, then plain
// sm90: the suffixed builds use features the plain one leaves out) and a single arch a fat
// binary, and precision breaks the remaining ties.
// Used to keep one best fit among files that differ only in their local label.
int specificity(const build_variant& file, const selector& wanted) noexcept;

}  // namespace wheelhouse::variants
