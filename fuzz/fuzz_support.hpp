#pragma once
// What every harness shares: how a broken property is reported, and how one input is split into
// several values. A broken property aborts, so libFuzzer keeps the input as a crash file.

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

namespace wheelhouse::fuzz {

// Prints what broke, with the values involved (escaped), and aborts.
[[noreturn]] inline void property_failed(const char* property, std::string_view detail) {
    std::fprintf(stderr, "\n*** property broken: %s\n", property);
    for (unsigned char c : detail) {
        if (c == '\\') std::fputs("\\\\", stderr);
        else if (c >= 0x20 && c < 0x7F) std::fputc(c, stderr);
        else if (c == '\n') std::fputs("\\n\n", stderr);
        else std::fprintf(stderr, "\\x%02x", c);
    }
    std::fputc('\n', stderr);
    std::abort();
}

#define WHEELHOUSE_FUZZ_CHECK(condition, detail)                                              \
    do {                                                                                      \
        if (!(condition)) ::wheelhouse::fuzz::property_failed(#condition, (detail));          \
    } while (false)

inline std::string_view as_text(const std::uint8_t* data, std::size_t size) {
    return {reinterpret_cast<const char*>(data), size};
}

// The input cut at every `separator`: one input holds several values, so a dictionary entry or
// a corpus line can become any of them. Always at least one part.
inline std::vector<std::string_view> split(std::string_view text, char separator) {
    std::vector<std::string_view> parts;
    while (true) {
        const auto at = text.find(separator);
        parts.push_back(text.substr(0, at));
        if (at == std::string_view::npos) return parts;
        text.remove_prefix(at + 1);
    }
}

}  // namespace wheelhouse::fuzz
