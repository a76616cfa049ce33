#include "wheelhouse/http/conditional.hpp"

#include <charconv>
#include <ctime>

#include "wheelhouse/crypto/hasher.hpp"
#include "wheelhouse/text/ascii.hpp"

namespace wheelhouse::http_conditional {
namespace {

using text::trim;

std::string_view opaque_tag(std::string_view tag) noexcept {
    if (tag.substr(0, 2) == "W/") tag.remove_prefix(2);
    return tag;
}

std::optional<std::uint64_t> parse_number(std::string_view text) noexcept {
    if (text.empty()) return std::nullopt;
    std::uint64_t value = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec != std::errc{} || end != text.data() + text.size()) return std::nullopt;
    return value;
}

}  // namespace

std::string http_date(std::int64_t unix_seconds) {
    const auto seconds = static_cast<std::time_t>(unix_seconds);
    std::tm parts{};
    gmtime_r(&seconds, &parts);
    char text[40];
    // The C locale's day and month names, which are HTTP's (the server never sets a locale).
    const auto length = std::strftime(text, sizeof text, "%a, %d %b %Y %H:%M:%S GMT", &parts);
    return std::string(text, length);
}

std::optional<std::int64_t> parse_http_date(std::string_view date) noexcept {
    date = trim(date);
    if (date.empty() || date.size() > 64) return std::nullopt;
    char text[65];
    date.copy(text, date.size());
    text[date.size()] = '\0';
    // IMF-fixdate, RFC 850's obsolete form, and asctime's: each must consume the whole value.
    for (const char* format : {"%a, %d %b %Y %H:%M:%S GMT", "%A, %d-%b-%y %H:%M:%S GMT", "%a %b %e %H:%M:%S %Y"}) {
        std::tm parts{};
        const char* end = strptime(text, format, &parts);
        if (end != nullptr && *end == '\0') return static_cast<std::int64_t>(timegm(&parts));
    }
    return std::nullopt;
}

bool unmodified_since(std::string_view if_modified_since, std::int64_t last_modified) noexcept {
    const auto since = parse_http_date(if_modified_since);
    return since && last_modified <= *since;
}

std::string strong_entity_tag(std::string_view body) {
    return "\"" + crypto::sha256_hex(body).substr(0, 32) + "\"";
}

bool if_none_match_matches(std::string_view if_none_match, std::string_view etag) noexcept {
    if_none_match = trim(if_none_match);
    if (if_none_match == "*") return true;
    const auto wanted = opaque_tag(etag);
    while (!if_none_match.empty()) {
        const auto comma = if_none_match.find(',');
        const auto candidate = trim(if_none_match.substr(0, comma));
        if (opaque_tag(candidate) == wanted) return true;
        if (comma == std::string_view::npos) break;
        if_none_match.remove_prefix(comma + 1);
    }
    return false;
}

range_decision decide_range(std::string_view range_header, std::uint64_t size) noexcept {
    range_header = trim(range_header);
    constexpr std::string_view unit = "bytes=";
    if (range_header.substr(0, unit.size()) != unit) return {};
    const auto spec = trim(range_header.substr(unit.size()));
    if (spec.find(',') != std::string_view::npos) return {};
    const auto dash = spec.find('-');
    if (dash == std::string_view::npos) return {};
    const auto first_text = trim(spec.substr(0, dash));
    const auto last_text = trim(spec.substr(dash + 1));

    if (first_text.empty()) {  // suffix: the last n bytes
        const auto suffix = parse_number(last_text);
        if (!suffix) return {};
        if (*suffix == 0 || size == 0) return {range_outcome::unsatisfiable, {}};
        const auto length = std::min(*suffix, size);
        return {range_outcome::partial, {size - length, length}};
    }
    const auto first = parse_number(first_text);
    if (!first) return {};
    std::uint64_t last = size == 0 ? 0 : size - 1;
    if (!last_text.empty()) {
        const auto parsed_last = parse_number(last_text);
        if (!parsed_last || *parsed_last < *first) return {};
        last = std::min(*parsed_last, last);
    }
    if (*first >= size) return {range_outcome::unsatisfiable, {}};
    return {range_outcome::partial, {*first, last - *first + 1}};
}

std::string content_range(const byte_range& range, std::uint64_t size) {
    return "bytes " + std::to_string(range.first) + "-" + std::to_string(range.first + range.length - 1) + "/" +
           std::to_string(size);
}

}  // namespace wheelhouse::http_conditional
