#pragma once
// PEP 427 / packaging.python.org "Binary distribution format": what a wheel's filename says.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "wheelhouse/pep440/version.hpp"
#include "wheelhouse/result.hpp"

namespace wheelhouse::pep427 {

// "280.129" -> {280, ".129"}; "1" -> {1, ""}. Must start with a digit.
struct build_tag {
    std::uint64_t number = 0;
    std::string suffix;
    std::string text;  // as written
};

struct wheel_filename {
    std::string filename;         // as given
    std::string name;             // the distribution part as written: "flash_attn"
    std::string normalized_name;  // PEP 503: "flash-attn"
    std::string version_text;     // as written: "2.8.3+cu128torch2.8"
    pep440::version version;
    std::optional<build_tag> build;
    // Compressed tag sets expanded, in the order written: "py2.py3" -> {"py2", "py3"}.
    // Lower-cased, as packaging's Tag does; each one satisfies is_valid_tag().
    std::vector<std::string> python_tags;
    std::vector<std::string> abi_tags;
    std::vector<std::string> platform_tags;
    // PEP 825: the last component before ".whl" of a variant wheel ("cu128_sm90", or "null" for
    // the null variant); told from a build tag by its place and first character.
    std::optional<std::string> variant_label;
};

// True for one tag of a tag set ("cp314t", "manylinux_2_28_x86_64", "graalpy242_311_native"):
// non-empty, ASCII letters, digits and '_' only. packaging itself checks no characters here.
bool is_valid_tag(std::string_view tag) noexcept;

// True for a PEP 825 variant label: non-empty, of 0-9, a-z, '_' and '.' only.
bool is_valid_variant_label(std::string_view label) noexcept;

// Parses "{name}-{version}(-{build})?-{python}-{abi}-{platform}(-{variant label})?.whl". Accepts the legacy
// spellings real indexes hold ("PyYAML-…", "Django-…", unsorted tag sets) and refuses, with the
// precise reason, anything pip would refuse or that is unsafe as a file name (path separators,
// "..", control or non-ASCII characters, more than 255 bytes).
result<wheel_filename> parse_wheel_filename(std::string_view filename);

}  // namespace wheelhouse::pep427
