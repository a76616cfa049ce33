#pragma once
// Untrusted text as it can safely appear in an error message or a log line.

#include <string>
#include <string_view>

namespace wheelhouse::text {

// 'text' in single quotes; control and non-ASCII bytes written as \xHH, and cut after
// `shown` bytes with "..." so a hostile input cannot forge or flood a log line.
std::string quoted(std::string_view text, std::size_t shown = 120);

// One byte for a message: "'!'" when printable ASCII, "byte 0xC3" otherwise.
std::string describe_byte(char byte);

}  // namespace wheelhouse::text
