#pragma once
// A project's files as one variant index shows them. pip picks among the builds of a release
// by PEP 440 order, never by what a page prefers, so the page must already hold the one build
// that is right for the machine: every file that fits the selector, but of the files that
// compete for one build slot only the best fit.

#include <cstddef>
#include <span>
#include <string>
#include <vector>

#include "wheelhouse/catalog/records.hpp"
#include "wheelhouse/variants/selector.hpp"

namespace wheelhouse::catalog {

// The files `wanted` lists, as indices into `files` (one project's) in ascending order:
//  - its sdists only when none of its builds carries a variant: where some do, a machine no build
//    fits must find nothing, not an sdist that pip would compile (flash-attn, for hours, or failing);
//  - every file whose variant says nothing about the machine (pure-Python wheels, plain
//    dependencies, nightlies labelled by git hash alone), so an index used alone still resolves;
//  - of the files that fit `wanted` and share a build slot (release version without the local
//    label; python, abi and platform tags), the one with the highest specificity(); on a tie the
//    one pip would take anyway: highest in PEP 440 order, then by build tag, then by filename.
// PEP 825 variant wheels are fitted by their properties (pep825_fit) and compete for a slot of
// their own, so a variant index shows the best of them beside the best plain build; their null
// variant fits every selector.
// The build tag is no part of the slot: pip compares it only between files of equal version, so
// such files compete for one place too (and SageAttention's "280.129" is a variant itself).
std::vector<std::size_t> listed_files(std::span<const file_record> files, const variants::selector& wanted);

// The CUDA and torch versions and GPUs a project's builds name ("12.8", "13.0"; torch as
// major.minor; compute capabilities without their suffix, "9.0" for sm90a): how that project's
// users spell the families its builds belong to.
struct family_versions {
    std::vector<std::string> cuda;
    std::vector<std::string> torch;
    std::vector<std::string> sm;
};
family_versions versions_named(std::span<const file_record> files);

// The selectors a build with this variant could be asked for by: every combination of one way
// of asking about each axis its variant speaks to, or none. The ways are its accelerator
// (cuNNN, rocmX.Y, cpu or xpu) and for CUDA the family's other spellings the build fits (the
// major "cu12" of a cu128 build; each of `named`'s 12.x for a "cu12" build); torch major.minor,
// and for a lower bound each later torch in `named`; each GPU that runs one of its SM
// architectures (sm90 for sm90a; for sm100f sm100, sm103 and each of `named`'s 10.x); its C++
// ABI. Only selectors that parse_selector reads back as themselves: a CUDA major with no
// spelling of its own ("9" of a cu92 build) is left out. Most words first, then the build's own
// spellings before the family's, then by canonical spelling, so the first is the most specific
// way to ask for exactly this build. Empty for a variant that says nothing about the machine.
// Representative, not exhaustive: a version no build of the project names may reach the build
// too (cu126 for a cu12 build, a newer torch).
std::vector<variants::selector> candidate_selectors(const variants::build_variant& variant,
                                                    const family_versions& named = {});

// A torch version as its family: major.minor ("2.10.0" -> "2.10"), how selectors name it.
std::string torch_family(std::string_view torch);

// How the admin catalog heads a build's column, in selector words: "cu130 · torch2.10 · sm89",
// "cu12 · torch2.7 · cxx11abi1", "rocm6.4 · torch2.8", "cu128 · torch2.9.0andhigher"; the torch of
// an exact build as major.minor (torch2.10 for 2.10.0 and 2.10), a fat binary's archs as
// "sm80,sm90a". Empty for a variant that says nothing about the machine.
std::string family_label(const variants::build_variant& variant);

// For each of `files`, the canonical candidate selectors (with the versions `files` name) whose
// index really lists it (a candidate may not: another build of the same slot can fit it better).
// Files without a machine variant get none: every variant index lists them. A PEP 825 wheel
// proposes the selectors its nvidia properties name (nvidia_variant).
std::vector<std::vector<std::string>> reaching_selectors(std::span<const file_record> files);

}  // namespace wheelhouse::catalog
