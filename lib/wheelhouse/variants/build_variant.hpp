#pragma once
// What a wheel's local label or build tag says about the machine it was built for:
// "+cu130sm89torch2.10.0" -> {cuda 13.0, sm 8.9, torch 2.10.0}. Decoding never fails:
// whatever cannot be read is kept raw beside what could.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <boost/json/object.hpp>

namespace wheelhouse::pep427 {
struct wheel_filename;
}

namespace wheelhouse::variants {

struct build_variant {
    std::optional<std::string> cuda;        // "13.0", "11.8", or "12" when only the major is known
    std::optional<std::string> sm;          // GPU architecture "8.9", "12.0", "9.0a"; several: "8.0,9.0"
    std::optional<std::string> torch;       // "2.10.0", "2.7"
    bool torch_and_higher = false;          // "torch2.10.0andhigher": torch is a lower bound
    std::optional<bool> cxx11abi;           // "cxx11abiTRUE" / "FALSE" / "1" / "0"
    std::optional<std::string> rocm;        // "6.4"
    bool cpu = false;
    bool xpu = false;
    std::optional<std::string> git_hash;    // "g1a2b3c4" -> "1a2b3c4"
    std::optional<std::string> build_date;  // "20250101"
    std::vector<std::string> unparsed;      // pieces that were not understood, as written in the
                                            // normalised label (lower case, no separators)

    // True when nothing was decoded (unparsed text may still be present).
    bool empty() const noexcept;
    friend bool operator==(const build_variant&, const build_variant&) = default;
};

// Decodes a local label, with or without its '+' ("cu128torch2.8cxx11abiFALSE").
build_variant decode_local_label(std::string_view label);

// Decodes a build tag that encodes a build family, as SageAttention's "280.129"
// (torch 2.8.0, CUDA 12.9). Build tags that follow no known scheme decode to an empty variant.
build_variant decode_build_tag(std::string_view build_tag);

// Both of the above for one wheel; the local label wins where they disagree.
build_variant decode(const pep427::wheel_filename& wheel);

// Only the decoded fields; absent ones are left out. The one JSON shape every caller shares.
boost::json::object to_json(const build_variant& variant);

}  // namespace wheelhouse::variants
