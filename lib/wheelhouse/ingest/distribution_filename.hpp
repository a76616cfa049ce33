#pragma once
// The two kinds of file an upload may be, told apart by the name's extension: a wheel (PEP 427,
// ".whl") or a source distribution (PEP 625, ".tar.gz"; other archive kinds are refused as
// sdists, with the reason).

#include <string>
#include <string_view>
#include <variant>

#include "wheelhouse/pep427/wheel_filename.hpp"
#include "wheelhouse/pep625/sdist_filename.hpp"
#include "wheelhouse/result.hpp"

namespace wheelhouse::ingest {

using distribution_filename = std::variant<pep427::wheel_filename, pep625::sdist_filename>;

// A name that ends in neither ".whl" nor an archive extension is judged as a wheel's, whose
// refusal names both extensions.
result<distribution_filename> parse_distribution_filename(std::string_view filename);

const std::string& normalized_name_of(const distribution_filename& name) noexcept;

}  // namespace wheelhouse::ingest
