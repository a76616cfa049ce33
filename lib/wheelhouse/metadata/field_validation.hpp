#pragma once
// The METADATA fields the index shows (on pages, in the JSON API) or hands to installers,
// checked as the core metadata specification and the standards it cites define them, so
// that nothing a client cannot read is stored. Uploads and registered release assets pass
// through the same function.

#include "wheelhouse/metadata/core_metadata.hpp"
#include "wheelhouse/result.hpp"

namespace wheelhouse::metadata {

// Checks, in this order:
//   Metadata-Version  1.0, 1.1, 1.2, 2.0 (never a standard, but what wheel wrote for years),
//                     2.1 to 2.4, and any later 2.x: the specification has a tool fail only
//                     on a newer major version, as minor versions only add fields;
//   Name              a PEP 508 name; Version a PEP 440 version;
//   Summary           one line without control characters, at most 512 characters (PyPI's limit);
//   Requires-Python   a PEP 440 specifier set (pep440::parse_specifier_set), on one line;
//   Requires-Dist     each a PEP 508 requirement (pep508::parse_requirement);
//   Provides-Extra    each a valid name, which PEP 685 normalises for comparison;
//   Project-URL       each "label, URL": a label of 1 to 32 characters and an http(s) URL with a host;
// and that the single-use fields among them (Summary, Requires-Python) appear at most once.
// The error names the field, shows its value quoted (shortened, control and non-ASCII bytes
// escaped), says what is wrong and what to write instead.
result<void> validate_fields(const core_metadata& metadata);

}  // namespace wheelhouse::metadata
