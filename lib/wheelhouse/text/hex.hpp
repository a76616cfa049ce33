#pragma once
// Bytes written as hexadecimal digits: the one spelling digests, escapes and percent-encoding use.

#include <cstdint>
#include <span>
#include <string>

namespace wheelhouse::text {

enum class hex_case { lower, upper };  // lower for digests and \x escapes; upper for %XX (RFC 3986)

inline void append_hex(std::string& out, unsigned char byte, hex_case letters = hex_case::lower) {
    const char* digits = letters == hex_case::lower ? "0123456789abcdef" : "0123456789ABCDEF";
    out.push_back(digits[byte >> 4]);
    out.push_back(digits[byte & 0x0f]);
}

inline std::string to_hex(std::span<const std::uint8_t> bytes) {
    std::string out;
    out.reserve(bytes.size() * 2);
    for (const auto byte : bytes) append_hex(out, byte);
    return out;
}

}  // namespace wheelhouse::text
