#include "wheelhouse/text/quoted.hpp"

namespace wheelhouse::text {
namespace {

bool is_printable_ascii(unsigned char byte) noexcept { return byte >= 0x20 && byte < 0x7f; }

void append_hex(std::string& out, unsigned char byte) {
    constexpr char hex[] = "0123456789ABCDEF";
    out += hex[byte >> 4];
    out += hex[byte & 0xf];
}

}  // namespace

std::string quoted(std::string_view text, std::size_t shown) {
    std::string out = "'";
    for (std::size_t i = 0; i < text.size() && i < shown; ++i) {
        const auto byte = static_cast<unsigned char>(text[i]);
        if (is_printable_ascii(byte)) {
            out += text[i];
        } else {
            out += "\\x";
            append_hex(out, byte);
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
    append_hex(out, value);
    return out;
}

}  // namespace wheelhouse::text
