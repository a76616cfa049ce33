#include "wheelhouse/text/ascii.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "wheelhouse/text/hex.hpp"
#include "wheelhouse/text/swar.hpp"

namespace wheelhouse::text {

std::string to_lower(std::string_view text) {
    std::string out(text);
    for (char& c : out) c = to_lower(c);
    return out;
}

std::string_view trim(std::string_view text) noexcept {
    while (!text.empty() && is_blank(text.front())) text.remove_prefix(1);
    while (!text.empty() && is_blank(text.back())) text.remove_suffix(1);
    return text;
}

bool equals_ignoring_case(std::string_view a, std::string_view b) noexcept {
    return a.size() == b.size() &&
           std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) { return to_lower(x) == to_lower(y); });
}

bool starts_with_ignoring_case(std::string_view text, std::string_view prefix) noexcept {
    return text.size() >= prefix.size() && equals_ignoring_case(text.substr(0, prefix.size()), prefix);
}

bool ends_with_ignoring_case(std::string_view text, std::string_view suffix) noexcept {
    return text.size() >= suffix.size() && equals_ignoring_case(text.substr(text.size() - suffix.size()), suffix);
}

byte_kinds kinds_of_bytes(std::string_view text) noexcept {
    // Sixteen bytes a step in the compiler's portable vectors (SSE2 on x86-64): every redirect
    // passes its URL through here. The masks are OR-ed and looked at once, at the end.
    using bytes16 = unsigned char __attribute__((vector_size(16)));
    bytes16 control{};
    bytes16 seen{};
    std::size_t at = 0;
    for (; at + 16 <= text.size(); at += 16) {
        bytes16 block;
        std::memcpy(&block, text.data() + at, sizeof block);
        control |= reinterpret_cast<bytes16>((block < 0x20) | (block == 0x7F));
        seen |= block;
    }
    std::uint64_t halves[4];
    std::memcpy(halves, &control, sizeof control);
    std::memcpy(halves + 2, &seen, sizeof seen);
    std::uint64_t control_words = halves[0] | halves[1];
    std::uint64_t high = (halves[2] | halves[3]) & swar::highs;
    for (; at < text.size(); at += 8) {  // the last 1 to 15 bytes, by word (padding is neither kind)
        const auto word = at + 8 <= text.size() ? swar::load(text.data() + at)
                                                 : swar::load_tail(text.data() + at, text.size() - at, 'a');
        control_words |= swar::some_byte_below(word, 0x20) | swar::some_byte_below(word ^ (swar::ones * 0x7F), 1);
        high |= word & swar::highs;
    }
    return {.control = control_words != 0, .non_ascii = high != 0};
}

std::string percent_encode_space_and_non_ascii(std::string_view text) {
    std::string out;
    out.reserve(text.size() + text.size() / 2);
    for (const char c : text) {
        const auto byte = static_cast<unsigned char>(c);
        if (byte > ' ' && byte < 0x80) {
            out.push_back(c);
            continue;
        }
        out.push_back('%');
        append_hex(out, byte, hex_case::upper);
    }
    return out;
}

}  // namespace wheelhouse::text
