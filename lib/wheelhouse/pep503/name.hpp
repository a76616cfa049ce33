#pragma once
// PEP 503 / packaging.python.org "Names and normalization": project names as indexes see them.

#include <string>
#include <string_view>

namespace wheelhouse::pep503 {

// True for a valid project name: ASCII letters and digits, with '.', '_' and '-' allowed
// between them, case-insensitive (^([A-Z0-9]|[A-Z0-9][A-Z0-9._-]*[A-Z0-9])$/i).
bool is_valid_project_name(std::string_view name) noexcept;

// Lower-case, every run of '-', '_' and '.' replaced by one '-': "Flash_Attn" -> "flash-attn",
// "zope.interface" -> "zope-interface". Pure; defined for any input.
std::string normalize(std::string_view name);

}  // namespace wheelhouse::pep503
