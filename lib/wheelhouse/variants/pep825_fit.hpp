#pragma once
// How a PEP 825 variant wheel fits a variant selector. PEP 825 leaves property meanings to a
// later PEP; this reads the namespace its examples use for NVIDIA GPUs:
//   nvidia :: cuda_version_lower_bound :: 12.8   runs with CUDA 12.8 and later minors of 12
//   nvidia :: sm_arch :: 90_real                 SASS for compute capability 9.0 (runs_on rules)
//   nvidia :: sm_arch :: 90_virtual              PTX for 9.0: JIT-compiled on 9.0 and later GPUs
// A wheel fits when, for each of these features it lists, one of its values fits the machine
// (PEP 825: one value per feature must be compatible). Other namespaces are not judged.

#include <optional>
#include <string_view>

#include "wheelhouse/pep825/variant_metadata.hpp"
#include "wheelhouse/variants/selector.hpp"

namespace wheelhouse::variants {

// nullopt when the wheel cannot run on the machine `wanted` describes (an NVIDIA build for a
// cpu, rocm or xpu selector; a CUDA lower bound above, or of another major than, the selector's
// CUDA; no sm_arch value that runs on the selector's GPU). Otherwise how closely it fits, higher
// better, on specificity()'s scale: each feature met by name counts, a feature the wheel pins
// that the selector leaves open counts against it, a higher CUDA bound and SASS over PTX break
// ties. The null variant fits everything with the lowest score of a fitting build, 0.
std::optional<int> pep825_fit(const pep825::variant_properties& properties, const selector& wanted);

// The same properties in build_variant terms, to propose the selectors that may list the wheel:
// the lowest CUDA bound as `cuda`, the SASS and PTX archs as `sm` ("9.0,12.0"). Empty without
// nvidia properties.
build_variant nvidia_variant(const pep825::variant_properties& properties);

}  // namespace wheelhouse::variants
