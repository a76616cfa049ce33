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

namespace wheelhouse::variants {

// The files `wanted` lists, as indices into `files` in ascending order:
//  - every file whose variant says nothing about the machine (pure-Python wheels, plain
//    dependencies, nightlies labelled by git hash alone), so an index used alone still resolves;
//  - of the files that fit `wanted` and share a build slot (release version without the local
//    label; python, abi and platform tags), the one with the highest specificity(); on a tie the
//    one pip would take anyway: highest in PEP 440 order, then by build tag, then by filename.
// The build tag is no part of the slot: pip compares it only between files of equal version, so
// such files compete for one place too (and SageAttention's "280.129" is a variant itself).
std::vector<std::size_t> listed_files(std::span<const catalog::file_record> files, const selector& wanted);

// The selectors a build with this variant could be asked for by: every combination of the
// words its variant speaks (its accelerator as cuNNN, rocmX.Y, cpu or xpu; torch major.minor;
// each of its SM architectures; its C++ ABI), most words first, then by canonical spelling.
// Empty for a variant that says nothing about the machine.
std::vector<selector> candidate_selectors(const build_variant& variant);

// For each of `files`, the canonical candidate selectors whose index really lists it (a
// candidate may not: another build of the same slot can fit it better). Files without a
// machine variant get none: every variant index lists them.
std::vector<std::vector<std::string>> reaching_selectors(std::span<const catalog::file_record> files);

}  // namespace wheelhouse::variants
