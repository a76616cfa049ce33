#include "wheelhouse/pep503/name.hpp"

#include "wheelhouse/text/ascii.hpp"

namespace wheelhouse::pep503 {
namespace {

bool is_alphanumeric(char c) noexcept {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

bool is_separator(char c) noexcept { return c == '-' || c == '_' || c == '.'; }

using text::to_lower;

}  // namespace

bool is_valid_project_name(std::string_view name) noexcept {
    if (name.empty() || !is_alphanumeric(name.front()) || !is_alphanumeric(name.back())) return false;
    for (char c : name) {
        if (!is_alphanumeric(c) && !is_separator(c)) return false;
    }
    return true;
}

std::string normalize(std::string_view name) {
    // Written in place, not pushed back a byte at a time: every page request normalises a name.
    std::string out(name.size(), '\0');
    std::size_t length = 0;
    bool in_separator_run = false;
    for (char c : name) {
        if (is_separator(c)) {
            if (!in_separator_run) out[length++] = '-';
            in_separator_run = true;
        } else {
            out[length++] = to_lower(c);
            in_separator_run = false;
        }
    }
    out.resize(length);
    return out;
}

}  // namespace wheelhouse::pep503
