#pragma once
// PEP 440 versions (packaging.python.org "Version specifiers"): parse every valid spelling,
// print the normalised form, and order exactly as the specification does.

#include <compare>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "wheelhouse/result.hpp"

namespace wheelhouse::pep440 {

enum class pre_kind { alpha, beta, release_candidate };  // normalised "a", "b", "rc"

struct pre_release {
    pre_kind kind = pre_kind::alpha;
    std::uint64_t number = 0;
    friend bool operator==(const pre_release&, const pre_release&) = default;
};

// One '.'-separated part of a local label. Strings are lower-cased; numbers compare
// numerically and sort after every string.
using local_part = std::variant<std::string, std::uint64_t>;

struct version {
    std::uint64_t epoch = 0;
    std::vector<std::uint64_t> release;  // never empty in a parsed version
    std::optional<pre_release> pre;
    std::optional<std::uint64_t> post;
    std::optional<std::uint64_t> dev;
    std::vector<local_part> local;       // empty when there is no local label

    // The normalised form: "1!2.0rc1.post2.dev3+cu130.sm89".
    std::string to_string() const;
    // Without the local label: "2.8.3" for "2.8.3+cu128torch2.8".
    std::string public_string() const;
    // The normalised local label without '+': "cu128torch2.8", empty without one.
    std::string local_string() const;
    bool is_prerelease() const noexcept { return pre.has_value() || dev.has_value(); }
};

// Parses any valid PEP 440 spelling (case-insensitive, leading 'v', surrounding whitespace,
// alternative pre/post/dev spellings, implicit post "1.0-1", '-'/'_' in local labels).
// Numbers past 2^64-1 are refused. The error names the part that is wrong.
result<version> parse(std::string_view text);

// PEP 440 order, local labels included (segment by segment; a longer label wins a tie).
// Release segments compare as if padded with zeros, so "1.0" and "1.0.0" are equivalent.
std::weak_ordering compare(const version& a, const version& b) noexcept;

// What Python's str.isspace() accepts within ASCII: the whitespace packaging strips around
// versions and specifiers.
bool is_python_space(char c) noexcept;

inline bool operator==(const version& a, const version& b) noexcept { return compare(a, b) == 0; }
inline std::weak_ordering operator<=>(const version& a, const version& b) noexcept { return compare(a, b); }

}  // namespace wheelhouse::pep440
