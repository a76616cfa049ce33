#include "wheelhouse/text/base64.hpp"

#include <array>
#include <cstdint>

namespace wheelhouse::text {
namespace {

constexpr std::string_view standard_alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
constexpr std::string_view url_alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

using decoding_table = std::array<std::int8_t, 256>;

constexpr decoding_table table_of(std::string_view alphabet) {
    decoding_table table{};
    for (auto& entry : table) entry = -1;
    for (std::size_t i = 0; i < alphabet.size(); ++i) {
        table[static_cast<unsigned char>(alphabet[i])] = static_cast<std::int8_t>(i);
    }
    return table;
}

// `text` without padding, in the alphabet `table` reads; nullopt for any byte outside it, a
// length no encoding has, or leftover bits that are not zero.
std::optional<std::string> decode_unpadded(std::string_view text, const decoding_table& table) {
    if (text.size() % 4 == 1) return std::nullopt;  // 6 bits cannot make a byte
    std::string out;
    out.reserve(text.size() * 3 / 4);
    std::uint32_t bits = 0;
    int bit_count = 0;
    for (char c : text) {
        const auto value = table[static_cast<unsigned char>(c)];
        if (value < 0) return std::nullopt;
        bits = (bits << 6 | static_cast<std::uint32_t>(value)) & 0xffffff;
        bit_count += 6;
        if (bit_count >= 8) {
            bit_count -= 8;
            out.push_back(static_cast<char>(bits >> bit_count & 0xff));
        }
    }
    // Leftover bits must be zero, or two texts would decode to the same bytes.
    if ((bits & ((1u << bit_count) - 1)) != 0) return std::nullopt;
    return out;
}

// The three bytes of each group as four characters; the last group's one or two bytes as
// two or three, then '=' up to four when `padded`.
std::string encode(std::span<const std::uint8_t> bytes, std::string_view alphabet, bool padded) {
    std::string out;
    out.reserve((bytes.size() + 2) / 3 * 4);
    std::size_t i = 0;
    for (; i + 3 <= bytes.size(); i += 3) {
        const std::uint32_t group = std::uint32_t{bytes[i]} << 16 | std::uint32_t{bytes[i + 1]} << 8 | bytes[i + 2];
        out.push_back(alphabet[group >> 18 & 63]);
        out.push_back(alphabet[group >> 12 & 63]);
        out.push_back(alphabet[group >> 6 & 63]);
        out.push_back(alphabet[group & 63]);
    }
    const std::size_t left = bytes.size() - i;
    if (left == 0) return out;
    std::uint32_t group = std::uint32_t{bytes[i]} << 16;
    if (left == 2) group |= std::uint32_t{bytes[i + 1]} << 8;
    out.push_back(alphabet[group >> 18 & 63]);
    out.push_back(alphabet[group >> 12 & 63]);
    if (left == 2) out.push_back(alphabet[group >> 6 & 63]);
    if (padded) out.append(3 - left, '=');
    return out;
}

}  // namespace

std::string base64url_encode(std::span<const std::uint8_t> bytes) { return encode(bytes, url_alphabet, false); }

std::string base64url_encode(std::string_view bytes) {
    return base64url_encode(std::span<const std::uint8_t>{reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size()});
}

std::string base64_encode(std::string_view bytes) {
    return encode({reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size()}, standard_alphabet, true);
}

std::optional<std::string> base64_decode(std::string_view text) {
    static constexpr auto table = table_of(standard_alphabet);
    std::size_t padding = 0;
    while (!text.empty() && text.back() == '=') {
        text.remove_suffix(1);
        ++padding;
    }
    if (padding > 2) return std::nullopt;
    if (padding > 0 && (text.size() + padding) % 4 != 0) return std::nullopt;
    return decode_unpadded(text, table);
}

std::optional<std::string> base64url_decode(std::string_view text) {
    static constexpr auto table = table_of(url_alphabet);
    return decode_unpadded(text, table);
}

}  // namespace wheelhouse::text
