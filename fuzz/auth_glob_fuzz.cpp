// Project-scope globs (auth/scope): a pattern and a text on two lines. Beside memory safety:
// - glob_match agrees with the definition ('*' any run, '?' one character, everything else
//   itself), computed here as a table over pattern and text prefixes;
// - a pattern without wildcards matches exactly itself, and "*" matches everything;
// - permits() never lets a limited grant reach a string that is not a valid project name.

#include <string>
#include <vector>

#include "fuzz_support.hpp"
#include "wheelhouse/auth/scope.hpp"
#include "wheelhouse/pep503/name.hpp"

namespace {

// matches[j]: the pattern's first i characters match the text's first j, row by row.
bool reference(std::string_view pattern, std::string_view text) {
    std::vector<char> matches(text.size() + 1, 0), next(text.size() + 1, 0);
    matches[0] = 1;
    for (char p : pattern) {
        next.assign(text.size() + 1, 0);
        if (p == '*') next[0] = matches[0];
        for (std::size_t j = 1; j <= text.size(); ++j) {
            if (p == '*') next[j] = matches[j] || next[j - 1];
            else next[j] = matches[j - 1] && (p == '?' || p == text[j - 1]);
        }
        matches.swap(next);
    }
    return matches[text.size()] != 0;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const auto parts = wheelhouse::fuzz::split(wheelhouse::fuzz::as_text(data, size), '\n');
    const std::string_view pattern = parts[0];
    const std::string_view text = parts.size() > 1 ? parts[1] : std::string_view();
    const std::string names = "pattern '" + std::string(pattern) + "', text '" + std::string(text) + "'";
    const bool matched = wheelhouse::auth::glob_match(pattern, text);
    if (pattern.size() * text.size() <= 1000000) {
        WHEELHOUSE_FUZZ_CHECK(matched == reference(pattern, text), names + ": disagrees with the definition");
    }
    if (pattern.find_first_of("*?") == std::string_view::npos) {
        WHEELHOUSE_FUZZ_CHECK(matched == (pattern == text), names + ": a plain pattern is not equality");
    }
    WHEELHOUSE_FUZZ_CHECK(wheelhouse::auth::glob_match("*", text), names + ": '*' does not match");

    const wheelhouse::auth::token_grant grant{"fuzz", wheelhouse::auth::scope::admin, {std::string(pattern)}};
    if (wheelhouse::auth::permits(grant, wheelhouse::auth::scope::read, text)) {
        WHEELHOUSE_FUZZ_CHECK(wheelhouse::pep503::is_valid_project_name(text), names + ": permitted a non-name");
    }
    return 0;
}
