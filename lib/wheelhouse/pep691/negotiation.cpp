#include "wheelhouse/pep691/negotiation.hpp"

#include <algorithm>
#include <array>
#include <string>
#include <cctype>
#include <charconv>

#include "wheelhouse/text/ascii.hpp"

namespace wheelhouse::pep691 {
namespace {

struct offer {
    std::string_view type;  // as matched against the Accept header
    media_choice choice;
};

// Ours, in order of preference: JSON is cheaper for pip to read.
constexpr std::array<offer, 5> offers{{
    {json_v1, {page_format::json, json_v1}},
    {"application/vnd.pypi.simple.latest+json", {page_format::json, json_v1}},
    {html_v1, {page_format::html, html_v1}},
    {"application/vnd.pypi.simple.latest+html", {page_format::html, html_v1}},
    {text_html, {page_format::html, text_html_utf8}},
}};

using text::equals_ignoring_case;
using text::trim;

// q in thousandths, as RFC 9110 allows at most three decimals; malformed q counts as 0.
int parse_quality(std::string_view value) {
    value = trim(value);
    if (value.empty() || (value[0] != '0' && value[0] != '1')) return 0;
    int whole = value[0] - '0';
    int thousandths = 0;
    if (value.size() > 1) {
        if (value[1] != '.' || value.size() > 5) return 0;
        int scale = 100;
        for (char c : value.substr(2)) {
            if (c < '0' || c > '9') return 0;
            thousandths += (c - '0') * scale;
            scale /= 10;
        }
    }
    const int q = whole * 1000 + thousandths;
    return q > 1000 ? 0 : q;
}

// How specifically `range` (e.g. "application/*") matches `type`; -1 when it does not.
int match_specificity(std::string_view range, std::string_view type) {
    if (range == "*/*") return 0;
    const auto slash = type.find('/');
    if (range.size() == slash + 2 && range.substr(slash) == "/*" && equals_ignoring_case(range.substr(0, slash), type.substr(0, slash)))
        return 1;
    return equals_ignoring_case(range, type) ? 2 : -1;
}

}  // namespace

std::optional<media_choice> negotiate(std::string_view accept_header, bool html_only) {
    accept_header = trim(accept_header);
    if (accept_header.empty()) return media_choice{page_format::html, text_html_utf8};

    // For each offer, the q of the most specific range that matches it.
    std::array<int, offers.size()> quality{};
    std::array<int, offers.size()> specificity{};
    quality.fill(0);
    specificity.fill(-1);

    while (!accept_header.empty()) {
        const auto comma = accept_header.find(',');
        const auto item = trim(accept_header.substr(0, comma));
        accept_header = comma == std::string_view::npos ? std::string_view{} : accept_header.substr(comma + 1);
        if (item.empty()) continue;

        const auto semicolon = item.find(';');
        const auto range = trim(item.substr(0, semicolon));
        int q = 1000;
        if (semicolon != std::string_view::npos) {
            auto params = item.substr(semicolon + 1);
            while (!params.empty()) {
                const auto next = params.find(';');
                const auto param = trim(params.substr(0, next));
                params = next == std::string_view::npos ? std::string_view{} : params.substr(next + 1);
                if (param.size() >= 2 && (param[0] == 'q' || param[0] == 'Q') && param[1] == '=')
                    q = parse_quality(param.substr(2));
            }
        }
        for (std::size_t i = 0; i < offers.size(); ++i) {
            const int how = match_specificity(range, offers[i].type);
            // Of equally specific ranges the most accepting wins, so the order a client lists
            // them in never matters ("text/html;q=0, text/html" is text/html either way round).
            if (how >= 0 && (how > specificity[i] || (how == specificity[i] && q > quality[i]))) {
                specificity[i] = how;
                quality[i] = q;
            }
        }
    }

    // Highest q wins; on a tie a type named outright beats one reached through a wildcard.
    std::optional<std::size_t> best;
    for (std::size_t i = 0; i < offers.size(); ++i) {
        if (quality[i] <= 0 || (html_only && offers[i].choice.format == page_format::json)) continue;
        if (!best || quality[i] > quality[*best] ||
            (quality[i] == quality[*best] && specificity[i] == 2 && specificity[*best] < 2))
            best = i;
    }
    if (!best) return std::nullopt;
    // Reached only through a wildcard (*/*, text/*): the plain HTML page a browser expects,
    // when that is acceptable too.
    constexpr std::size_t text_html_offer = offers.size() - 1;
    if (specificity[*best] < 2 && quality[text_html_offer] == quality[*best]) return offers[text_html_offer].choice;
    return offers[*best].choice;
}

bool prefers_html_for_core_metadata(std::string_view user_agent) {
    constexpr std::string_view prefix = "pip/";
    if (user_agent.substr(0, prefix.size()) != prefix) return false;
    const auto version = user_agent.substr(prefix.size());
    unsigned major = 0;
    unsigned minor = 0;
    auto [end, ec] = std::from_chars(version.data(), version.data() + version.size(), major);
    if (ec != std::errc{} || end == version.data() + version.size() || *end != '.') return false;
    const char* minor_begin = end + 1;
    if (std::from_chars(minor_begin, version.data() + version.size(), minor).ec != std::errc{}) return false;
    return major < 23 || (major == 23 && minor < 2);
}

std::optional<media_choice> choose_by_format_parameter(std::string_view raw_value) {
    // An unescaped '+' in a query string arrives decoded as a space.
    std::string value(raw_value);
    std::replace(value.begin(), value.end(), ' ', '+');
    if (equals_ignoring_case(value, "json")) return media_choice{page_format::json, json_v1};
    if (equals_ignoring_case(value, "html")) return media_choice{page_format::html, text_html_utf8};
    for (const auto& candidate : offers) {
        if (equals_ignoring_case(value, candidate.type)) return candidate.choice;
    }
    return std::nullopt;
}

}  // namespace wheelhouse::pep691
