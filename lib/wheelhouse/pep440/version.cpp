#include "wheelhouse/pep440/version.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <limits>

#include "wheelhouse/text/ascii.hpp"
#include "wheelhouse/text/quoted.hpp"

// A hand-written scanner for the language of packaging 23.0's VERSION_PATTERN (anchored, with
// surrounding whitespace, case-insensitive). The pattern is unambiguous enough to be read
// greedily left to right: every optional separator it allows is either followed by what it
// introduces or, after a label without a number, harmlessly consumed, exactly as the regular
// expression's backtracking would settle. Deliberately stricter than packaging: only ASCII is
// accepted (packaging's IGNORECASE regex also takes U+017F for 's' in "post", U+212A for 'k' in a
// local label, and Unicode whitespace around the version), and numbers past 2^64-1 are refused.

namespace wheelhouse::pep440 {
namespace {

using text::describe_byte;
using text::quoted;

constexpr std::uint64_t largest_number = std::numeric_limits<std::uint64_t>::max();

bool is_digit(char c) noexcept { return c >= '0' && c <= '9'; }
bool is_letter(char c) noexcept { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
bool is_alphanumeric(char c) noexcept { return is_digit(c) || is_letter(c); }
bool is_separator(char c) noexcept { return c == '.' || c == '-' || c == '_'; }
using text::starts_with_ignoring_case;
using text::to_lower;

bool is_space(char c) noexcept { return is_python_space(c); }

void append_number(std::string& out, std::uint64_t number) {
    std::array<char, 24> digits{};
    const auto end = std::to_chars(digits.data(), digits.data() + digits.size(), number).ptr;
    out.append(digits.data(), end);
}

struct label {
    std::string_view spelling;  // lower case
    pre_kind kind;
};

// Longest spellings first: "alpha" must be tried before "a", "preview" before "pre".
constexpr std::array<label, 8> pre_labels{{
    {"preview", pre_kind::release_candidate},
    {"alpha", pre_kind::alpha},
    {"beta", pre_kind::beta},
    {"pre", pre_kind::release_candidate},
    {"rc", pre_kind::release_candidate},
    {"a", pre_kind::alpha},
    {"b", pre_kind::beta},
    {"c", pre_kind::release_candidate},
}};
constexpr std::array<std::string_view, 3> post_labels{"post", "rev", "r"};

bool is_pre_label(std::string_view word) noexcept {
    return std::any_of(pre_labels.begin(), pre_labels.end(), [&](const label& l) { return l.spelling == word; });
}
bool is_post_label(std::string_view word) noexcept {
    return std::find(post_labels.begin(), post_labels.end(), word) != post_labels.end();
}

class parser {
public:
    explicit parser(std::string_view original) : original_(original) {}

    result<version> run() {
        std::size_t begin = 0;
        std::size_t end = original_.size();
        while (begin < end && is_space(original_[begin])) ++begin;
        while (end > begin && is_space(original_[end - 1])) --end;
        text_ = original_.substr(begin, end - begin);
        if (text_.empty()) return fail(original_.empty() ? "empty version" : "nothing but whitespace");

        if (at('v') || at('V')) ++position_;
        if (!is_digit(peek())) {
            return fail("a version must start with a number (optionally after 'v' or an epoch 'N!')");
        }
        if (auto problem = parse_epoch_and_release()) return *problem;
        if (auto problem = parse_pre()) return *problem;
        if (auto problem = parse_post()) return *problem;
        if (auto problem = parse_dev()) return *problem;
        if (at('+')) {
            if (auto problem = parse_local()) return *problem;
        }
        if (position_ != text_.size()) return explain_leftover();
        return std::move(version_);
    }

private:
    using maybe_error = std::optional<error>;

    char peek(std::size_t ahead = 0) const noexcept {
        return position_ + ahead < text_.size() ? text_[position_ + ahead] : '\0';
    }
    bool at(char c) const noexcept { return position_ < text_.size() && text_[position_] == c; }
    bool at_end(std::size_t ahead = 0) const noexcept { return position_ + ahead >= text_.size(); }

    error fail(std::string_view reason) const { return invalid("version " + quoted(original_) + ": " + std::string(reason)); }

    // Reads the digits at the cursor. The caller has checked there is at least one.
    maybe_error read_number(std::string_view part, std::uint64_t& number) {
        const std::size_t start = position_;
        while (is_digit(peek())) ++position_;
        const std::string_view digits = text_.substr(start, position_ - start);
        if (std::from_chars(digits.data(), digits.data() + digits.size(), number).ec == std::errc::result_out_of_range) {
            return fail(std::string(part) + " " + quoted(digits, 40) + " is larger than " +
                        std::to_string(largest_number) + ", the largest number accepted");
        }
        return std::nullopt;
    }

    maybe_error parse_epoch_and_release() {
        std::uint64_t number = 0;
        const std::size_t first_digit = position_;
        while (is_digit(peek())) ++position_;
        const bool is_epoch = at('!');
        position_ = first_digit;
        version_.release.reserve(4);  // one allocation for the common "2.8.3"
        if (auto problem = read_number(is_epoch ? "epoch" : "release segment", number)) return problem;
        if (is_epoch) {
            version_.epoch = number;
            ++position_;
            if (!is_digit(peek())) {
                return fail("the epoch " + quoted(text_.substr(first_digit, position_ - first_digit), 40) +
                            " must be followed by a release number, as in '1!2.0'");
            }
            if (auto problem = read_number("release segment", number)) return problem;
        }
        version_.release.push_back(number);
        while (at('.')) {
            if (is_digit(peek(1))) {
                ++position_;
                if (auto problem = read_number("release segment", number)) return problem;
                version_.release.push_back(number);
            } else if (at_end(1) || (peek(1) == '.' && (is_digit(peek(2)) || at_end(2)))) {
                return fail("empty release segment (every '.' in the release must be followed by a number)");
            } else {
                break;  // a separator before a pre-, post- or dev-release label
            }
        }
        return std::nullopt;
    }

    // The number after a pre-, post- or dev-release label: "1", ".1", "-1", "_1", or none (0).
    // A separator with no number after it is consumed, as packaging's pattern does ("1.0a.").
    maybe_error read_label_number(std::string_view part, std::uint64_t& number) {
        number = 0;
        if (is_separator(peek()) && is_digit(peek(1))) ++position_;
        if (is_digit(peek())) return read_number(part, number);
        if (is_separator(peek())) ++position_;
        return std::nullopt;
    }

    // Where a label starts after an optional separator, or npos when none of `spellings` is there.
    template <class Spellings, class Spelling>
    std::size_t match_label(const Spellings& spellings, Spelling spelling_of, std::size_t& which) const {
        std::size_t start = position_;
        if (is_separator(peek())) ++start;
        const std::string_view rest = text_.substr(std::min(start, text_.size()));
        for (std::size_t i = 0; i < spellings.size(); ++i) {
            if (starts_with_ignoring_case(rest, spelling_of(spellings[i]))) {
                which = i;
                return start;
            }
        }
        return std::string_view::npos;
    }

    maybe_error parse_pre() {
        std::size_t which = 0;
        const std::size_t start = match_label(pre_labels, [](const label& l) { return l.spelling; }, which);
        if (start == std::string_view::npos) return std::nullopt;
        position_ = start + pre_labels[which].spelling.size();
        pre_release pre{pre_labels[which].kind, 0};
        if (auto problem = read_label_number("pre-release number", pre.number)) return problem;
        version_.pre = pre;
        return std::nullopt;
    }

    maybe_error parse_post() {
        std::uint64_t number = 0;
        if (at('-') && is_digit(peek(1))) {  // the implicit post-release "1.0-1"
            ++position_;
            if (auto problem = read_number("post-release number", number)) return problem;
            version_.post = number;
            return std::nullopt;
        }
        std::size_t which = 0;
        const std::size_t start = match_label(post_labels, [](std::string_view s) { return s; }, which);
        if (start == std::string_view::npos) return std::nullopt;
        position_ = start + post_labels[which].size();
        if (auto problem = read_label_number("post-release number", number)) return problem;
        version_.post = number;
        return std::nullopt;
    }

    maybe_error parse_dev() {
        constexpr std::array<std::string_view, 1> dev_labels{"dev"};
        std::size_t which = 0;
        const std::size_t start = match_label(dev_labels, [](std::string_view s) { return s; }, which);
        if (start == std::string_view::npos) return std::nullopt;
        position_ = start + dev_labels[0].size();
        std::uint64_t number = 0;
        if (auto problem = read_label_number("dev-release number", number)) return problem;
        version_.dev = number;
        return std::nullopt;
    }

    maybe_error parse_local() {
        ++position_;  // '+'
        version_.local.reserve(4);
        if (position_ == text_.size()) {
            return fail("empty local label after '+' (write one, as in '1.0+cu128', or drop the '+')");
        }
        while (true) {
            const std::size_t start = position_;
            while (is_alphanumeric(peek())) ++position_;
            if (position_ == start) {
                if (at_end()) {
                    return fail("the local label ends with a separator; remove the trailing '" +
                                std::string(1, text_[position_ - 1]) + "'");
                }
                const char c = peek();
                if (is_separator(c)) {
                    return fail(text_[start - 1] == '+'
                                    ? "the local label starts with the separator '" + std::string(1, c) + "'"
                                    : "empty part in the local label (two separators in a row)");
                }
                return fail(invalid_local_character(c));
            }
            if (auto problem = append_local_part(text_.substr(start, position_ - start))) return problem;
            if (is_separator(peek())) {
                ++position_;
                continue;
            }
            if (position_ == text_.size()) return std::nullopt;
            const char c = peek();
            if (is_space(c)) return fail("whitespace inside the version (only leading and trailing whitespace is ignored)");
            return fail(invalid_local_character(c));
        }
    }

    static std::string invalid_local_character(char c) {
        if (c == '+') return "a second '+' in the local label (join its parts with '.', as in '2.8.3+cu128.torch2.8')";
        return "invalid character " + describe_byte(c) +
               " in the local label (letters and digits, separated by '.', '-' or '_')";
    }

    // A part of digits is a number ("007" is 7); any other is lower-cased text.
    maybe_error append_local_part(std::string_view part) {
        if (std::all_of(part.begin(), part.end(), is_digit)) {
            std::uint64_t number = 0;
            if (std::from_chars(part.data(), part.data() + part.size(), number).ec == std::errc::result_out_of_range) {
                return fail("local label part " + quoted(part, 40) + " is larger than " +
                            std::to_string(largest_number) + ", the largest number accepted");
            }
            version_.local.emplace_back(number);
            return std::nullopt;
        }
        std::string lowered = to_lower(part);
        version_.local.emplace_back(std::move(lowered));
        return std::nullopt;
    }

    // The scan stopped before the end: say which part is wrong in the terms a person typed.
    error explain_leftover() const {
        // Fragments of the input are quoted short: they may be long or hold any byte.
        const auto fragment = [](std::string_view part) { return quoted(part, 40); };
        const std::string_view parsed = text_.substr(0, position_);
        const std::string_view rest = text_.substr(position_);
        const char c = rest.front();
        if (is_space(c)) return fail("whitespace inside the version (only leading and trailing whitespace is ignored)");
        if (c == '!') return fail("an epoch 'N!' can only come first, as a single number ('1!2.0')");
        if (c == '-' && rest.size() > 1 && is_digit(rest[1])) {
            std::size_t digits_end = 1;
            while (digits_end < rest.size() && is_digit(rest[digits_end])) ++digits_end;
            const std::string implicit_post = fragment(rest.substr(0, digits_end));
            return fail(version_.post ? "two post-release segments (" + implicit_post +
                                            " is an implicit post-release after one already given)"
                                      : "the post-release " + implicit_post + " must come before the dev-release");
        }

        // Separators, then the word the scan could not place. A word that began before the stop
        // ("alph" read as "a" + "lph") is reported whole.
        std::size_t separators = 0;
        while (separators < rest.size() && is_separator(rest[separators])) ++separators;
        if (separators == rest.size()) {
            return fail("ends with the separator " + fragment(rest) + " after " + fragment(parsed));
        }
        std::size_t word_start = position_ + separators;
        if (separators == 0) {
            while (word_start > 0 && is_letter(text_[word_start - 1])) --word_start;
        }
        std::size_t word_end = position_ + separators;
        while (word_end < text_.size() && is_letter(text_[word_end])) ++word_end;
        const std::string word = to_lower(text_.substr(word_start, word_end - word_start));
        std::size_t segment_end = word_end;  // the label with its number, as written: "b2"
        while (segment_end < text_.size() && is_digit(text_[segment_end])) ++segment_end;
        const std::string segment = fragment(text_.substr(word_start, segment_end - word_start));
        const std::string before = fragment(text_.substr(0, std::min(word_start, position_)));

        if (word.empty()) {
            const char next = rest[separators];
            if (is_digit(next)) {
                return fail("unexpected " + fragment(rest) + " after " + fragment(parsed) +
                            " (numbers belong to the release or follow a pre-, post- or dev-release label)");
            }
            return fail("invalid character " + describe_byte(next) + " at position " +
                        std::to_string(position_ + separators + 1) +
                        (static_cast<unsigned char>(next) >= 0x80 ? " (versions are ASCII)" : ""));
        }
        if (separators > 1) {
            return fail("two separators in a row (" + fragment(rest.substr(0, separators)) + ") before " + fragment(word));
        }
        if (is_pre_label(word)) {
            if (version_.pre) return fail("two pre-release segments (" + segment + " after " + before + ")");
            return fail("the pre-release " + segment + " must come before the " +
                        (version_.post ? "post-release" : "dev-release"));
        }
        if (is_post_label(word)) {
            if (version_.post) return fail("two post-release segments (" + segment + " after " + before + ")");
            return fail("the post-release " + segment + " must come before the dev-release");
        }
        if (word == "dev") return fail("two dev-release segments (" + segment + " after " + before + ")");
        return fail("unknown label " + fragment(word) +
                    " (expected a pre-release a, b or rc, a post-release .postN, a dev-release .devN, "
                    "or a local label after '+')");
    }

    std::string_view original_;
    std::string_view text_;
    std::size_t position_ = 0;
    version version_;
};

std::size_t significant_release_length(const std::vector<std::uint64_t>& release) noexcept {
    std::size_t length = release.size();
    while (length > 0 && release[length - 1] == 0) --length;
    return length;
}

// packaging's _cmpkey for the pre-release: a bare dev release sorts before every pre-release,
// a version without one after every pre-release.
int pre_rank(const version& v) noexcept {
    if (!v.pre && !v.post && v.dev) return 0;
    return v.pre ? 1 : 2;
}

std::weak_ordering compare_local(const std::vector<local_part>& a, const std::vector<local_part>& b) noexcept {
    const std::size_t common = std::min(a.size(), b.size());
    for (std::size_t i = 0; i < common; ++i) {
        const auto* a_text = std::get_if<std::string>(&a[i]);
        const auto* b_text = std::get_if<std::string>(&b[i]);
        if (a_text && b_text) {
            if (const int order = a_text->compare(*b_text); order != 0) {
                return order < 0 ? std::weak_ordering::less : std::weak_ordering::greater;
            }
        } else if (a_text) {
            return std::weak_ordering::less;  // strings sort before numbers
        } else if (b_text) {
            return std::weak_ordering::greater;
        } else if (const auto order = std::get<std::uint64_t>(a[i]) <=> std::get<std::uint64_t>(b[i]); order != 0) {
            return order;
        }
    }
    return a.size() <=> b.size();
}

}  // namespace

std::string version::public_string() const {
    std::string out;
    out.reserve(8 + 4 * release.size());
    if (epoch != 0) {
        append_number(out, epoch);
        out += '!';
    }
    for (std::size_t i = 0; i < release.size(); ++i) {
        if (i != 0) out += '.';
        append_number(out, release[i]);
    }
    if (pre) {
        out += pre->kind == pre_kind::alpha ? "a" : pre->kind == pre_kind::beta ? "b" : "rc";
        append_number(out, pre->number);
    }
    if (post) {
        out += ".post";
        append_number(out, *post);
    }
    if (dev) {
        out += ".dev";
        append_number(out, *dev);
    }
    return out;
}

std::string version::local_string() const {
    std::string out;
    for (std::size_t i = 0; i < local.size(); ++i) {
        if (i != 0) out += '.';
        if (const auto* text = std::get_if<std::string>(&local[i])) {
            out += *text;
        } else {
            append_number(out, std::get<std::uint64_t>(local[i]));
        }
    }
    return out;
}

std::string version::to_string() const {
    std::string out = public_string();
    if (!local.empty()) {
        out += '+';
        out += local_string();
    }
    return out;
}

result<version> parse(std::string_view text) { return parser(text).run(); }

bool is_python_space(char c) noexcept {
    return c == ' ' || (c >= '\t' && c <= '\r') || (c >= '\x1c' && c <= '\x1f');
}

std::weak_ordering compare(const version& a, const version& b) noexcept {
    if (const auto order = a.epoch <=> b.epoch; order != 0) return order;

    const std::size_t a_length = significant_release_length(a.release);
    const std::size_t b_length = significant_release_length(b.release);
    for (std::size_t i = 0; i < std::min(a_length, b_length); ++i) {
        if (const auto order = a.release[i] <=> b.release[i]; order != 0) return order;
    }
    if (const auto order = a_length <=> b_length; order != 0) return order;

    if (const auto order = pre_rank(a) <=> pre_rank(b); order != 0) return order;
    if (a.pre && b.pre) {
        if (const auto order = a.pre->kind <=> b.pre->kind; order != 0) return order;
        if (const auto order = a.pre->number <=> b.pre->number; order != 0) return order;
    }

    if (const auto order = a.post.has_value() <=> b.post.has_value(); order != 0) return order;  // none first
    if (a.post && b.post) {
        if (const auto order = *a.post <=> *b.post; order != 0) return order;
    }

    if (const auto order = b.dev.has_value() <=> a.dev.has_value(); order != 0) return order;  // none last
    if (a.dev && b.dev) {
        if (const auto order = *a.dev <=> *b.dev; order != 0) return order;
    }

    return compare_local(a.local, b.local);  // an empty label sorts first, as packaging's "none"
}

}  // namespace wheelhouse::pep440
