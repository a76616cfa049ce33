#pragma once
// A distribution file's name (a wheel's, an sdist's) as the index stores it on disk and puts it
// in URLs, and the one shape of a refusal of one: wheel and sdist filenames are refused alike.

#include <cstddef>
#include <optional>
#include <string_view>

#include "wheelhouse/result.hpp"

namespace wheelhouse::text {

// Bytes; the limit of ext4, XFS, NTFS, APFS.
inline constexpr std::size_t longest_file_name = 255;

// A refusal of a `kind` ("wheel", "sdist") filename. The reason is the status line an uploader
// sees ("wheel filename: <reason>"); the filename, which may be long (and the uploader knows
// it), goes to the detail, after `detail`.
error refuse_file_name(std::string_view kind, std::string_view filename, std::string_view reason,
                       std::string_view detail = {});

// Whether refuse_file_name's reason line fits a status line whole (error_text.hpp's reason_budget).
bool fits_status_line(std::string_view kind, std::string_view reason) noexcept;

// Stricter than packaging, which takes any characters it does not split on: a filename that is
// stored on disk and put in URLs is printable ASCII without spaces, a file name and not a path,
// at most longest_file_name bytes. `ascii_hint` follows the reason a non-ASCII byte gets.
std::optional<error> check_file_name_bytes(std::string_view kind, std::string_view filename,
                                           std::string_view ascii_hint = {});

}  // namespace wheelhouse::text
