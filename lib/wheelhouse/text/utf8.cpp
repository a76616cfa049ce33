#include "wheelhouse/text/utf8.hpp"

#include <algorithm>

#include "wheelhouse/text/hex.hpp"

namespace wheelhouse::text {
namespace {

constexpr std::string_view replacement = "\xEF\xBF\xBD";  // U+FFFD in UTF-8

// The range a lead byte allows for the byte after it (the first continuation byte); it is
// narrower than 80..BF where a wider one would allow overlong forms, surrogates or code points
// past U+10FFFF. Table 3-7 of the Unicode Standard.
struct lead_byte {
    std::size_t length = 0;  // 0: not a lead byte
    unsigned char second_low = 0x80;
    unsigned char second_high = 0xBF;
};

lead_byte classify(unsigned char byte) noexcept {
    if (byte >= 0xC2 && byte <= 0xDF) return {2, 0x80, 0xBF};
    if (byte == 0xE0) return {3, 0xA0, 0xBF};
    if (byte == 0xED) return {3, 0x80, 0x9F};
    if (byte >= 0xE1 && byte <= 0xEF) return {3, 0x80, 0xBF};
    if (byte == 0xF0) return {4, 0x90, 0xBF};
    if (byte >= 0xF1 && byte <= 0xF3) return {4, 0x80, 0xBF};
    if (byte == 0xF4) return {4, 0x80, 0x8F};
    return {};
}

// How many bytes from bytes[i], a lead byte of `lead`, begin a well-formed sequence.
std::size_t well_formed_prefix(std::string_view bytes, std::size_t i, const lead_byte& lead) noexcept {
    std::size_t valid = 1;
    while (valid < lead.length && i + valid < bytes.size()) {
        const auto next = static_cast<unsigned char>(bytes[i + valid]);
        const bool fits = valid == 1 ? (next >= lead.second_low && next <= lead.second_high)
                                     : (next >= 0x80 && next <= 0xBF);
        if (!fits) break;
        ++valid;
    }
    return valid;
}

// The first sequence that is not well formed: where it starts, what its lead byte allows, and
// how many of its bytes are well formed (fewer than lead.length).
struct ill_formed {
    std::size_t offset = 0;
    lead_byte lead;
    std::size_t valid = 0;
};

std::optional<ill_formed> first_ill_formed(std::string_view bytes) noexcept {
    for (std::size_t i = 0; i < bytes.size();) {
        if (static_cast<unsigned char>(bytes[i]) < 0x80) {
            ++i;
            continue;
        }
        const lead_byte lead = classify(static_cast<unsigned char>(bytes[i]));
        if (lead.length == 0) return ill_formed{i, lead, 0};
        const std::size_t valid = well_formed_prefix(bytes, i, lead);
        if (valid != lead.length) return ill_formed{i, lead, valid};
        i += lead.length;
    }
    return std::nullopt;
}

std::string hex_byte(unsigned char byte) {
    std::string out = "0x";
    append_hex(out, byte);
    return out;
}

}  // namespace

bool is_valid_utf8(std::string_view bytes) noexcept { return !first_ill_formed(bytes); }

std::optional<utf8_fault> find_utf8_fault(std::string_view bytes) {
    const auto bad = first_ill_formed(bytes);
    if (!bad) return std::nullopt;
    const auto byte = static_cast<unsigned char>(bytes[bad->offset]);
    if (bad->lead.length == 0) return utf8_fault{bad->offset, "byte " + hex_byte(byte) + " cannot start a character"};
    const std::string length = std::to_string(bad->lead.length);
    if (bad->offset + bad->valid >= bytes.size())
        return utf8_fault{bad->offset, "the text ends inside a " + length + "-byte character"};
    return utf8_fault{bad->offset, "a malformed " + length + "-byte character"};
}

std::string replace_invalid_utf8(std::string_view bytes) {
    std::string out;
    out.reserve(bytes.size());
    std::size_t i = 0;
    while (i < bytes.size()) {
        // A run of ASCII (most text, often all of it) is copied whole.
        const auto ascii_end = std::find_if(bytes.begin() + static_cast<std::ptrdiff_t>(i), bytes.end(),
                                            [](char c) { return static_cast<unsigned char>(c) >= 0x80; });
        const auto run = static_cast<std::size_t>(ascii_end - bytes.begin()) - i;
        out.append(bytes.substr(i, run));
        i += run;
        if (i == bytes.size()) break;
        const lead_byte lead = classify(static_cast<unsigned char>(bytes[i]));
        if (lead.length == 0) {
            out += replacement;  // a continuation byte without its lead, or a byte UTF-8 never uses
            ++i;
            continue;
        }
        const std::size_t valid = well_formed_prefix(bytes, i, lead);
        if (valid == lead.length) {
            out += bytes.substr(i, valid);
            i += valid;
        } else {
            out += replacement;  // the maximal subpart of a cut-short sequence: one replacement
            i += valid;
        }
    }
    return out;
}

}  // namespace wheelhouse::text
