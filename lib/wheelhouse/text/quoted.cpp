#include "wheelhouse/text/quoted.hpp"

#include "wheelhouse/text/hex.hpp"

namespace wheelhouse::text {
namespace {

bool is_printable_ascii(unsigned char byte) noexcept { return byte >= 0x20 && byte < 0x7f; }

}  // namespace

std::string quoted(std::string_view text, std::size_t shown) {
    std::string out = "'";
    for (std::size_t i = 0; i < text.size() && i < shown; ++i) {
        const auto byte = static_cast<unsigned char>(text[i]);
        if (is_printable_ascii(byte)) {
            out += text[i];
        } else {
            out += "\\x";
            append_hex(out, byte, hex_case::upper);
        }
    }
    if (text.size() > shown) out += "...";
    out += "'";
    return out;
}

std::string describe_byte(char byte) {
    const auto value = static_cast<unsigned char>(byte);
    if (is_printable_ascii(value)) return std::string("'") + byte + "'";
    std::string out = "byte 0x";
    append_hex(out, value, hex_case::upper);
    return out;
}

}  // namespace wheelhouse::text
