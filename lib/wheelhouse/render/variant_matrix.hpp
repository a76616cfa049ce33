#pragma once
// GET /api/v1/projects/<project>/variants: what builds a project has, laid out for a grid of
// versions x Python x platform x variant, with the variant index selectors that reach each
// build. Pure: the same rows always give the same bytes.
//
// {"name": "flash-attn", "display_name": "flash_attn", "status": "active",
//  "axes": {"python": ["cp311", "cp312"], "abi": [...], "platform": [...], "cuda": ["12.8", "13.0"],
//           "rocm": [], "torch": ["2.8", "2.10"], "sm": ["8.9", "12.0"], "cxx11abi": [false, true],
//           "accelerator": ["cuda", "rocm", "xpu", "cpu"]},
//  "versions": [{"version": "2.8.3", "builds": [
//      {"filename": "...", "packagetype": "bdist_wheel", "version": "2.8.3+cu130sm89torch2.10.0", "python_tag": "cp312",
//       "abi_tag": "cp312", "platform_tag": "linux_x86_64", "build_tag": null,
//       "variant": {"cuda": "13.0", "sm": "8.9", "torch": "2.10.0"}, "family": "cu130 · torch2.10 · sm89",
//       "selectors": ["cu130-torch2.10-sm89", "cu13-torch2.10-sm89", "cu130-sm89", ..., "sm89"],
//       "spellings": ["cu130sm89torch2.10", "cu130_torch2.10_sm89", "torch2.10+cu130-sm89", ...],
//       "sha256": "...", "size": 123, "url": "/files/<sha256>/<filename>",
//       "upload_time": "2025-07-01T12:00:00.000000Z", "requires_python": ">=3.9", "yanked": false,
//       "pep825": null}]}]}
//
// Versions are release versions (the local label is the variant's), newest first in PEP 440
// order; builds within one by filename. Axis values are as variants::to_json writes them, each
// once, in natural order ("cp39" before "cp312", "2.9" before "2.10"); compressed tag sets and
// fat binaries ("8.0,9.0") count once for each member. "variant" is variants::to_json, the same
// decoding /simple/'s "_variant" and `wheelhouse inspect` show. "selectors" is representative,
// not exhaustive (catalog::candidate_selectors): each one named lists the build, but a version
// no build of the project names (cu126 for a "cu12" build) may reach it too. "family" heads the
// build's column in selector words (catalog::family_label; "any" for a pure wheel, "no variant"
// for a platform build whose name says nothing of the machine, "sdist" for a source distribution,
// whose tags are "" and which no variant index of a project with variants lists). "spellings" are the other ways to
// write the first selector that the index answers with a 301 to it (variants::other_spellings).
// A PEP 825 variant wheel's family is "PEP 825 · <label>", "pep825" its label and properties
// (render::pep825_json), and its "selectors" the variant indexes that list it.

#include <span>
#include <string>

#include "wheelhouse/catalog/records.hpp"
#include "wheelhouse/render/simple_pages.hpp"

namespace wheelhouse::render {

// Every file of the project, yanked ones and those of a quarantined project included: this is
// the administrators' view.
std::string variant_matrix_json(const catalog::project_record& project, std::span<const catalog::file_record> files,
                                const link_options& links);

// "cp39" < "cp312", "2.9" < "2.10", "8.9" < "12.0": runs of digits compare as numbers.
bool natural_less(std::string_view a, std::string_view b) noexcept;

}  // namespace wheelhouse::render
