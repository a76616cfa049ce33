#include "wheelhouse/auth/scope.hpp"

#include <algorithm>

#include "wheelhouse/pep503/name.hpp"

namespace wheelhouse::auth {
namespace {

bool is_wildcard(char c) noexcept { return c == '*' || c == '?'; }

std::string printable(std::string_view text) {
    std::string out(text.substr(0, 100));
    std::replace_if(out.begin(), out.end(), [](char c) { return static_cast<unsigned char>(c) < 0x20 || c == 0x7f; }, '?');
    return out;
}

bool is_pattern_char(char c) noexcept {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_' ||
           c == '.' || is_wildcard(c);
}

}  // namespace

std::string_view to_string(scope value) noexcept {
    switch (value) {
        case scope::read: return "read";
        case scope::upload: return "upload";
        case scope::admin: return "admin";
    }
    return "read";
}

result<scope> parse_scope(std::string_view text) {
    for (const auto candidate : {scope::read, scope::upload, scope::admin}) {
        if (text == to_string(candidate)) return candidate;
    }
    std::string shown(text.substr(0, 30));
    std::replace_if(shown.begin(), shown.end(), [](char c) { return c < 0x20 || c == 0x7f; }, '?');
    return invalid("unknown scope '" + shown + "': use read, upload or admin");
}

result<std::string> normalize_project_pattern(std::string_view pattern) {
    if (pattern.empty()) return invalid("an empty project pattern: give a project name or a glob such as 'nunchaku-*'");
    const auto bad = std::find_if_not(pattern.begin(), pattern.end(), is_pattern_char);
    if (bad != pattern.end()) {
        const auto byte = static_cast<unsigned char>(*bad);
        constexpr std::string_view hex = "0123456789abcdef";
        const std::string shown = byte < 0x20 || byte >= 0x7f ? std::string{'\\', 'x', hex[byte >> 4], hex[byte & 15]}
                                                              : std::string(1, *bad);
        return invalid("project pattern '" + printable(pattern) + "' contains '" + shown +
                       "': use letters, digits, '-', '_', '.', and the wildcards '*' and '?'");
    }
    if (std::none_of(pattern.begin(), pattern.end(), is_wildcard) && !pep503::is_valid_project_name(pattern)) {
        return invalid("project pattern '" + std::string(pattern) +
                       "' is not a valid project name (it must start and end with a letter or digit), so it "
                       "could never match");
    }
    auto normalized = pep503::normalize(pattern);
    if (normalized.front() == '-' || normalized.back() == '-') {
        return invalid("project pattern '" + std::string(pattern) +
                       "' starts or ends with a separator, and no normalised project name does");
    }
    return normalized;
}

bool glob_match(std::string_view pattern, std::string_view text) noexcept {
    std::size_t p = 0;
    std::size_t t = 0;
    std::size_t star = std::string_view::npos;  // the last '*' seen in the pattern
    std::size_t star_text = 0;                  // where the text stood when it was seen
    while (t < text.size()) {
        if (p < pattern.size() && (pattern[p] == '?' || pattern[p] == text[t])) {
            ++p;
            ++t;
        } else if (p < pattern.size() && pattern[p] == '*') {
            star = p++;
            star_text = t;
        } else if (star != std::string_view::npos) {
            // Let the last '*' swallow one more character and try again from there.
            p = star + 1;
            t = ++star_text;
        } else {
            return false;
        }
    }
    while (p < pattern.size() && pattern[p] == '*') ++p;
    return p == pattern.size();
}

bool permits(const token_grant& grant, scope needed, std::string_view project) {
    if (static_cast<int>(grant.granted) < static_cast<int>(needed)) return false;
    if (grant.project_patterns.empty()) return true;
    if (project.empty()) return false;
    const auto name = pep503::normalize(project);
    return std::any_of(grant.project_patterns.begin(), grant.project_patterns.end(), [&](const std::string& pattern) {
        return glob_match(pep503::normalize(pattern), name);
    });
}

}  // namespace wheelhouse::auth
