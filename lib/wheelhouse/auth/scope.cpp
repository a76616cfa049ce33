#include "wheelhouse/auth/scope.hpp"

#include <algorithm>
#include <array>
#include <cstdint>
#include <vector>

#include "wheelhouse/pep503/name.hpp"
#include "wheelhouse/text/hex.hpp"

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

// State i of a pattern: its first i characters are matched. A '*' state loops on every
// character and also stands for the state after it (runs of '*' are folded to one, so one
// step of that closure is enough). The set of live states is a bitset, one word per 64.
class glob_automaton {
public:
    explicit glob_automaton(std::string_view pattern) {
        for (char c : pattern) {
            if (c != '*' || pattern_.empty() || pattern_.back() != '*') pattern_.push_back(c);
        }
        words_ = (pattern_.size() + 1 + 63) / 64;
        star_.assign(words_, 0);
        any_char_.assign(words_, 0);
        literal_row_.fill(-1);
        for (std::size_t i = 0; i < pattern_.size(); ++i) {
            const char c = pattern_[i];
            if (c == '*' || c == '?') {
                set(c == '*' ? star_ : any_char_, i);
                continue;
            }
            auto& row = literal_row_[static_cast<unsigned char>(c)];
            if (row < 0) {
                row = static_cast<std::int16_t>(literal_.size());
                literal_.emplace_back(words_, 0);
            }
            set(literal_[static_cast<std::size_t>(row)], i);
        }
    }

    bool matches(std::string_view text) const {
        state_set current(words_, 0), next(words_, 0), matching(words_, 0);
        set(current, 0);
        advance(current, star_, current);  // a leading '*' may match nothing
        for (char c : text) {
            matching = any_char_;
            if (const auto row = literal_row_[static_cast<unsigned char>(c)]; row >= 0) {
                const auto& literal = literal_[static_cast<std::size_t>(row)];
                for (std::size_t w = 0; w < words_; ++w) matching[w] |= literal[w];
            }
            for (std::size_t w = 0; w < words_; ++w) next[w] = current[w] & star_[w];  // '*' takes c
            advance(current, matching, next);                                          // c matched, move on
            advance(next, star_, next);                                                // '*' may end here
            std::swap(current, next);
            if (std::all_of(current.begin(), current.end(), [](std::uint64_t w) { return w == 0; })) return false;
        }
        const std::size_t accept = pattern_.size();
        return (current[accept / 64] >> (accept % 64)) & 1U;
    }

private:
    using state_set = std::vector<std::uint64_t>;

    static void set(state_set& states, std::size_t i) { states[i / 64] |= std::uint64_t{1} << (i % 64); }

    // into |= (from & mask) << 1, carried across words. `into` may be `from`: each word is read
    // before it is written.
    void advance(const state_set& from, const state_set& mask, state_set& into) const {
        std::uint64_t carry = 0;
        for (std::size_t w = 0; w < words_; ++w) {
            const std::uint64_t moving = from[w] & mask[w];
            into[w] |= (moving << 1) | carry;
            carry = moving >> 63;
        }
    }

    std::string pattern_;
    std::size_t words_ = 1;
    state_set star_, any_char_;
    std::array<std::int16_t, 256> literal_row_{};  // a byte's row in literal_, or -1
    std::vector<state_set> literal_;
};

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
        std::string shown(1, *bad);
        if (byte < 0x20 || byte >= 0x7f) {
            shown = "\\x";
            text::append_hex(shown, byte);
        }
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

bool glob_match(std::string_view pattern, std::string_view text) { return glob_automaton(pattern).matches(text); }

bool permits(const token_grant& grant, scope needed, std::string_view project) {
    if (static_cast<int>(grant.granted) < static_cast<int>(needed)) return false;
    if (grant.project_patterns.empty()) return true;
    if (!pep503::is_valid_project_name(project)) return false;
    const auto name = pep503::normalize(project);
    return std::any_of(grant.project_patterns.begin(), grant.project_patterns.end(), [&](const std::string& pattern) {
        return glob_match(pep503::normalize(pattern), name);
    });
}

}  // namespace wheelhouse::auth
