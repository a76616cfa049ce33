#include "wheelhouse/pep508/marker.hpp"

#include <array>

#include "wheelhouse/pep440/specifier.hpp"
#include "wheelhouse/pep503/name.hpp"
#include "wheelhouse/text/quoted.hpp"

// A recursive-descent reading of PEP 508's marker grammar, with the tokens packaging 23.0's
// tokenizer uses: whitespace is spaces and tabs; `and`, `or`, `in`, `not` and the variable
// names are whole words (a letter, digit or '_' may not follow them); strings are quoted with
// ' or " and run to the next same quote.

namespace wheelhouse::pep508 {
namespace {

using text::quoted;

struct variable_spelling {
    std::string_view written;
    std::string_view canonical;
};

// Longest spellings first where one is a prefix of another ("python_version" is not).
constexpr std::array<variable_spelling, 18> variables{{
    {"python_version", "python_version"},
    {"python_full_version", "python_full_version"},
    {"os_name", "os_name"},
    {"os.name", "os_name"},
    {"sys_platform", "sys_platform"},
    {"sys.platform", "sys_platform"},
    {"platform_release", "platform_release"},
    {"platform_system", "platform_system"},
    {"platform_version", "platform_version"},
    {"platform.version", "platform_version"},
    {"platform_machine", "platform_machine"},
    {"platform.machine", "platform_machine"},
    {"platform_python_implementation", "platform_python_implementation"},
    {"platform.python_implementation", "platform_python_implementation"},
    {"python_implementation", "platform_python_implementation"},
    {"implementation_name", "implementation_name"},
    {"implementation_version", "implementation_version"},
    {"extra", "extra"},
}};

constexpr std::string_view known_variables =
    "python_version, python_full_version, os_name, sys_platform, platform_release, platform_system, "
    "platform_version, platform_machine, platform_python_implementation, implementation_name, "
    "implementation_version or extra";

// Longest first: "===" before "==", "<=" before "<".
constexpr std::array<std::string_view, 8> comparison_operators{"===", "==", "~=", "!=", "<=", ">=", "<", ">"};

bool is_word_char(char c) noexcept {
    // Non-ASCII bytes count as word characters, as Python's \b counts Unicode letters.
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           static_cast<unsigned char>(c) >= 0x80;
}

bool is_control(char c) noexcept {
    const auto byte = static_cast<unsigned char>(c);
    return byte < 0x20 || byte == 0x7f;
}

// Each '(' is a level of recursion here (and in every client's parser): without a bound, a
// line of '(' exhausts the stack. Real markers nest two or three deep.
constexpr int deepest_nesting = 32;

class parser {
public:
    explicit parser(std::string_view text) : text_(text) {}

    result<marker> run() {
        auto parsed = parse_or();
        if (!parsed) return parsed;
        skip_space();
        if (position_ != text_.size()) {
            if (at(")")) return fail("a ')' without its '('");
            return fail("expected 'and', 'or' or the end of the marker");
        }
        return parsed;
    }

private:
    void skip_space() noexcept {
        while (position_ < text_.size() && (text_[position_] == ' ' || text_[position_] == '\t')) ++position_;
    }
    bool at(std::string_view token) const noexcept { return text_.substr(position_).starts_with(token); }
    bool at_word(std::string_view word) const noexcept {
        const std::size_t end = position_ + word.size();
        return at(word) && (end == text_.size() || !is_word_char(text_[end]));
    }

    error fail(std::string_view what) const {
        const std::string_view rest = text_.substr(position_);
        const std::string where = rest.empty() ? "at its end" : "at " + quoted(rest, 40);
        return invalid("marker " + quoted(text_) + ": " + std::string(what) + " (" + where + ")");
    }

    // Joins operands of one kind, absorbing operands of the same kind: (a and b) and c is a and b and c.
    static marker join(marker::kind kind, std::vector<marker> parts) {
        if (parts.size() == 1) return std::move(parts.front());
        marker out;
        out.what = kind;
        for (auto& part : parts) {
            if (part.what == kind) {
                for (auto& inner : part.operands) out.operands.push_back(std::move(inner));
            } else {
                out.operands.push_back(std::move(part));
            }
        }
        return out;
    }

    result<marker> parse_or() {
        std::vector<marker> parts;
        do {
            auto part = parse_and();
            if (!part) return part;
            parts.push_back(std::move(*part));
        } while (take_word("or"));
        return join(marker::kind::any_of, std::move(parts));
    }

    result<marker> parse_and() {
        std::vector<marker> parts;
        do {
            auto part = parse_atom();
            if (!part) return part;
            parts.push_back(std::move(*part));
        } while (take_word("and"));
        return join(marker::kind::all_of, std::move(parts));
    }

    bool take_word(std::string_view word) {
        skip_space();
        if (!at_word(word)) return false;
        position_ += word.size();
        return true;
    }

    result<marker> parse_atom() {
        skip_space();
        if (!at("(")) return parse_comparison();
        if (++depth_ > deepest_nesting) {
            return fail("parentheses nest more than " + std::to_string(deepest_nesting) +
                        " deep; remove the ones that group nothing");
        }
        ++position_;
        auto inner = parse_or();
        --depth_;
        if (!inner) return inner;
        skip_space();
        if (!at(")")) return fail("expected ')' to close the '(' or 'and'/'or' to go on");
        ++position_;
        return inner;
    }

    result<marker> parse_comparison() {
        marker out;
        auto left = parse_operand();
        if (!left) return left.error();
        auto op = parse_operator();
        if (!op) return op.error();
        auto right = parse_operand();
        if (!right) return right.error();
        out.leaf = marker_comparison{std::move(*left), std::move(*op), std::move(*right)};
        if (auto checked = check_evaluable(out.leaf); !checked) return checked.error();
        return out;
    }

    result<marker_operand> parse_operand() {
        skip_space();
        if (at("'") || at("\"")) return parse_string();
        for (const auto& variable : variables) {
            if (!at_word(variable.written)) continue;
            position_ += variable.written.size();
            return marker_operand{true, std::string(variable.canonical)};
        }
        std::size_t end = position_;
        while (end < text_.size() && (is_word_char(text_[end]) || text_[end] == '.')) ++end;
        if (end > position_) {
            return fail("unknown marker variable " + quoted(text_.substr(position_, end - position_), 40) +
                        "; use " + std::string(known_variables) + ", or quote a value");
        }
        return fail("expected a marker variable or a quoted string");
    }

    result<marker_operand> parse_string() {
        const char quote = text_[position_];
        const std::size_t start = position_ + 1;
        const std::size_t end = text_.find(quote, start);
        if (end == std::string_view::npos) return fail(std::string("a string without its closing ") + quote);
        const std::string_view value = text_.substr(start, end - start);
        for (char c : value) {
            if (c == '\\') return fail("a backslash in a string (marker strings take no escapes)");
            if (is_control(c)) return fail("a control character in a string");
        }
        position_ = end + 1;
        return marker_operand{false, std::string(value)};
    }

    result<std::string> parse_operator() {
        skip_space();
        for (std::string_view op : comparison_operators) {
            if (!at(op)) continue;
            position_ += op.size();
            return std::string(op);
        }
        if (take_word("in")) return std::string("in");
        if (at_word("not")) {
            position_ += 3;
            const std::size_t before = position_;
            skip_space();
            if (position_ == before || !take_word("in")) return fail("expected 'in' after 'not', with a space between");
            return std::string("not in");
        }
        return fail("expected a comparison: <=, <, !=, ==, >=, >, ~=, ===, in or not in");
    }

    // PEP 508 has ~= and === compare as versions only; with a literal on the right that is no
    // version, every client raises when it evaluates the marker.
    result<void> check_evaluable(const marker_comparison& comparison) const {
        if ((comparison.op != "~=" && comparison.op != "===") || comparison.right.is_variable) return {};
        if (auto specifier = pep440::parse_specifier(comparison.op + comparison.right.text); !specifier) {
            return invalid("marker " + quoted(text_) + ": '" + comparison.op + "' compares versions, and " +
                           quoted(comparison.right.text, 40) + " is none (" + specifier.error().message +
                           "); use '==' or 'in' to compare text");
        }
        return {};
    }

    std::string_view text_;
    std::size_t position_ = 0;
    int depth_ = 0;  // parentheses open at the current position
};

std::string operand_text(const marker_operand& operand, const marker_operand& other) {
    if (operand.is_variable) return operand.text;
    // PEP 685: an extra's name compares normalised.
    const bool extra = other.is_variable && other.text == "extra";
    const std::string value = extra ? pep503::normalize(operand.text) : operand.text;
    const char quote = value.find('"') == std::string::npos ? '"' : '\'';
    return quote + value + quote;
}

}  // namespace

std::string marker::to_string() const {
    if (what == kind::comparison) {
        return operand_text(leaf.left, leaf.right) + " " + leaf.op + " " + operand_text(leaf.right, leaf.left);
    }
    const std::string_view joiner = what == kind::all_of ? " and " : " or ";
    std::string out;
    for (const auto& operand : operands) {
        if (!out.empty()) out += joiner;
        const bool group = what == kind::all_of && operand.what == kind::any_of;
        out += group ? "(" + operand.to_string() + ")" : operand.to_string();
    }
    return out;
}

result<marker> parse_marker(std::string_view text) { return parser(text).run(); }

}  // namespace wheelhouse::pep508
