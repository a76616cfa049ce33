#include "wheelhouse/auth/duration.hpp"

#include <charconv>
#include <cstdint>
#include <string>

namespace wheelhouse::auth {
namespace {

constexpr std::int64_t day = 24 * 60 * 60;
constexpr std::int64_t longest = 100 * 365 * day;

std::int64_t unit_seconds(char unit) noexcept {
    switch (unit) {
        case 's': return 1;
        case 'm': return 60;
        case 'h': return 60 * 60;
        case 'd': return day;
        case 'w': return 7 * day;
        case 'y': return 365 * day;
        default: return 0;
    }
}

std::string shown(std::string_view text) {
    std::string out(text.substr(0, 40));
    for (char& c : out) {
        if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = '?';
    }
    return out;
}

}  // namespace

result<std::chrono::seconds> parse_duration(std::string_view text) {
    const std::string original = shown(text);
    if (text.empty()) return invalid("an empty duration: give a number and a unit, like 90d");
    std::int64_t total = 0;
    while (!text.empty()) {
        std::int64_t number = 0;
        const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), number);
        const auto digits = static_cast<std::size_t>(end - text.data());
        if (digits == 0 || number < 0 || text.front() == '-' || text.front() == '+') {
            return invalid("duration '" + original + "' needs a number where '" + shown(text) +
                           "' is: use a number and a unit, like 90d");
        }
        if (ec == std::errc::result_out_of_range) return invalid("duration '" + original + "' is too long: at most 100y");
        text.remove_prefix(digits);
        if (text.empty()) {
            return invalid("duration '" + original + "' has no unit after " + std::to_string(number) +
                           ": use s, m, h, d, w or y (90d is 90 days)");
        }
        const auto seconds = unit_seconds(text.front());
        if (seconds == 0) {
            return invalid("unknown unit '" + shown(text.substr(0, 1)) + "' in duration '" + original +
                           "': use s, m, h, d, w or y");
        }
        text.remove_prefix(1);
        if (number > longest / seconds || total + number * seconds > longest) {
            return invalid("duration '" + original + "' is too long: at most 100y");
        }
        total += number * seconds;
    }
    if (total == 0) return invalid("duration '" + original + "' is zero: a token must live for some time");
    return std::chrono::seconds(total);
}

}  // namespace wheelhouse::auth
