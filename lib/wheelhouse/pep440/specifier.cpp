#include "wheelhouse/pep440/specifier.hpp"

#include <algorithm>
#include <array>

#include "wheelhouse/text/ascii.hpp"
#include "wheelhouse/text/quoted.hpp"

// The language is packaging 23.0's Specifier regex: an operator, optional whitespace, and a
// version in the part of PEP 440's grammar that operator allows (== and != also take a local
// label or a trailing ".*" after the release; ~= needs two release numbers; === takes any
// word). That version part is VERSION_PATTERN cut down, so it is checked by parse() and the
// cuts are checked on the result. Stricter than packaging: ASCII only (as parse() is), and an
// === with nothing after it, which packaging accepts but then cannot evaluate, is refused.
// contains() follows packaging's Specifier._compare_* methods with one deliberate difference:
// a prefix match compares the epoch and release numbers themselves, where packaging 23.0
// compares strings and misses "1!2" in "==1!2.0.*" and "1!2a1" in "==1!2.*".

namespace wheelhouse::pep440 {
namespace {

using text::quoted;

struct operator_spelling {
    std::string_view text;
    comparison op;
};

// Longest first, so "===" is not read as "==" and "=".
constexpr std::array<operator_spelling, 8> operators{{
    {"===", comparison::arbitrary},
    {"~=", comparison::compatible},
    {"==", comparison::equal},
    {"!=", comparison::not_equal},
    {"<=", comparison::less_equal},
    {">=", comparison::greater_equal},
    {"<", comparison::less},
    {">", comparison::greater},
}};

bool is_digit(char c) noexcept { return c >= '0' && c <= '9'; }

std::string_view strip(std::string_view text) noexcept {
    while (!text.empty() && is_python_space(text.front())) text.remove_prefix(1);
    while (!text.empty() && is_python_space(text.back())) text.remove_suffix(1);
    return text;
}

// "v? (N!)? N(.N)*": what may stand before ".*".
bool is_release_only(std::string_view text) noexcept {
    if (!text.empty() && (text.front() == 'v' || text.front() == 'V')) text.remove_prefix(1);
    std::size_t i = 0;
    auto digits = [&] {
        const std::size_t start = i;
        while (i < text.size() && is_digit(text[i])) ++i;
        return i > start;
    };
    if (!digits()) return false;
    if (i < text.size() && text[i] == '!') {
        ++i;
        if (!digits()) return false;
    }
    while (i < text.size() && text[i] == '.') {
        ++i;
        if (!digits()) return false;
    }
    return i == text.size();
}

// The message for a clause that starts with no operator.
error missing_operator(std::string_view clause) {
    if (clause.starts_with("=>") || clause.starts_with("=<")) {
        return invalid("version specifier " + quoted(clause) + ": write '" + std::string{clause[1], '='} +
                       "' rather than '" + std::string(clause.substr(0, 2)) + "'");
    }
    if (clause.starts_with("=")) {
        return invalid("version specifier " + quoted(clause) + ": '=' is no operator; write " +
                       quoted("==" + std::string(strip(clause.substr(1)))) +
                       " for that version or '>=' for it and later ones");
    }
    if (!clause.empty() && (is_digit(clause.front()) || clause.front() == 'v' || clause.front() == 'V')) {
        return invalid("version specifier " + quoted(clause) + " has no operator; write " +
                       quoted(">=" + std::string(clause)) + " (or " + quoted("==" + std::string(clause)) +
                       " for that version only)");
    }
    return invalid("version specifier " + quoted(clause) +
                   " does not start with an operator (~=, ==, !=, <=, >=, <, > or ===)");
}

// Epoch and release numbers only, compared padded with zeros: packaging's base_version.
bool same_base(const version& a, const version& b) noexcept {
    version x{a.epoch, a.release, {}, {}, {}, {}};
    version y{b.epoch, b.release, {}, {}, {}, {}};
    return compare(x, y) == 0;
}

version without_local(const version& v) {
    version out = v;
    out.local.clear();
    return out;
}

// "==E!R.*": the candidate's epoch is E and its release, padded with zeros, starts with R.
bool has_prefix(const version& candidate, std::uint64_t epoch, const std::vector<std::uint64_t>& prefix) noexcept {
    if (candidate.epoch != epoch) return false;
    for (std::size_t i = 0; i < prefix.size(); ++i) {
        const std::uint64_t number = i < candidate.release.size() ? candidate.release[i] : 0;
        if (number != prefix[i]) return false;
    }
    return true;
}

bool equals(const specifier& clause, const version& candidate) {
    const version& target = *clause.target;
    if (clause.prefix_match) return has_prefix(candidate, target.epoch, target.release);
    // Without a local label in the clause, the candidate's own is ignored.
    if (target.local.empty()) return compare(without_local(candidate), target) == 0;
    return compare(candidate, target) == 0;
}

using text::to_lower;

bool holds(const specifier& clause, const version& candidate) {
    if (clause.op == comparison::arbitrary) return to_lower(candidate.to_string()) == to_lower(clause.written);
    const version& target = *clause.target;
    switch (clause.op) {
        case comparison::equal: return equals(clause, candidate);
        case comparison::not_equal: return !equals(clause, candidate);
        case comparison::less_equal: return compare(without_local(candidate), target) <= 0;
        case comparison::greater_equal: return compare(without_local(candidate), target) >= 0;
        case comparison::compatible: {
            // ~=X.Y is >=X.Y together with ==X.*.
            const std::vector<std::uint64_t> prefix(target.release.begin(), target.release.end() - 1);
            return compare(without_local(candidate), target) >= 0 && has_prefix(candidate, target.epoch, prefix);
        }
        case comparison::less:
            // <3.1 holds no pre-release of 3.1 itself unless the clause names one.
            if (compare(candidate, target) >= 0) return false;
            return target.is_prerelease() || !candidate.is_prerelease() || !same_base(candidate, target);
        case comparison::greater:
            // >3.1 holds neither a post-release nor a local build of 3.1 itself.
            if (compare(candidate, target) <= 0) return false;
            if (!target.post && candidate.post && same_base(candidate, target)) return false;
            return candidate.local.empty() || !same_base(candidate, target);
        case comparison::arbitrary: break;
    }
    return false;
}

result<specifier> parse_version_part(comparison op, std::string_view clause, std::string_view written) {
    specifier out;
    out.op = op;
    out.written = std::string(written);
    const std::string op_text(to_string(op));
    if (written.empty()) {
        return invalid("version specifier " + quoted(clause) + " has no version after '" + op_text + "'");
    }
    if (op == comparison::arbitrary) {
        if (written.find_first_of(";)") != std::string_view::npos ||
            std::any_of(written.begin(), written.end(), is_python_space)) {
            return invalid("version specifier " + quoted(clause) +
                           ": '===' takes one word, without spaces, ';' or ')'");
        }
        if (auto parsed = parse(written)) out.target = std::move(*parsed);
        return out;
    }
    std::string_view version_text = written;
    if (written.ends_with(".*")) {
        if (op != comparison::equal && op != comparison::not_equal) {
            return invalid("version specifier " + quoted(clause) +
                           ": a '.*' prefix match goes only with '==' or '!=' (write " +
                           quoted(op_text + std::string(written.substr(0, written.size() - 2))) + ")");
        }
        version_text.remove_suffix(2);
        if (!is_release_only(version_text)) {
            return invalid("version specifier " + quoted(clause) +
                           ": '.*' may follow only the release numbers, as in '==2.8.*'");
        }
        out.prefix_match = true;
    }
    auto parsed = parse(version_text);
    if (!parsed) return invalid("version specifier " + quoted(clause) + ": " + parsed.error().message);
    if (!parsed->local.empty() && op != comparison::equal && op != comparison::not_equal) {
        return invalid("version specifier " + quoted(clause) + ": a local label (+" + parsed->local_string() +
                       ") goes only with '==' or '!='; write '" + op_text + parsed->public_string() + "'");
    }
    if (op == comparison::compatible && parsed->release.size() < 2) {
        return invalid("version specifier " + quoted(clause) +
                       ": '~=' needs at least two release numbers, as in '~=" + parsed->public_string() +
                       ".0' (or write '>=" + parsed->public_string() + "')");
    }
    out.target = std::move(*parsed);
    return out;
}

}  // namespace

std::string_view to_string(comparison op) noexcept {
    for (const auto& spelling : operators) {
        if (spelling.op == op) return spelling.text;
    }
    return "==";
}

std::string specifier::to_string() const {
    std::string out(pep440::to_string(op));
    if (op == comparison::arbitrary || !target) return out + written;
    if (!prefix_match) return out + target->to_string();
    return out + target->public_string() + ".*";
}

bool specifier::admits_prereleases() const noexcept {
    switch (op) {
        case comparison::equal:
        case comparison::greater_equal:
        case comparison::less_equal:
        case comparison::compatible:
        case comparison::arbitrary:
            return target && !prefix_match && target->is_prerelease();
        default:
            return false;
    }
}

bool specifier::contains(const version& candidate, std::optional<bool> prereleases) const {
    if (candidate.is_prerelease() && !prereleases.value_or(admits_prereleases())) return false;
    return holds(*this, candidate);
}

result<specifier> parse_specifier(std::string_view text) {
    const std::string_view clause = strip(text);
    if (clause.empty()) return invalid("empty version specifier: write one such as '>=3.9'");
    for (const auto& spelling : operators) {
        if (!clause.starts_with(spelling.text)) continue;
        return parse_version_part(spelling.op, clause, strip(clause.substr(spelling.text.size())));
    }
    return missing_operator(clause);
}

std::string specifier_set::to_string() const {
    std::vector<std::string> printed;
    printed.reserve(clauses.size());
    for (const auto& clause : clauses) printed.push_back(clause.to_string());
    std::sort(printed.begin(), printed.end());
    printed.erase(std::unique(printed.begin(), printed.end()), printed.end());
    std::string out;
    for (const auto& clause : printed) out += (out.empty() ? "" : ",") + clause;
    return out;
}

bool specifier_set::contains(const version& candidate, std::optional<bool> prereleases) const {
    const bool admit = prereleases.value_or(
        std::any_of(clauses.begin(), clauses.end(), [](const specifier& s) { return s.admits_prereleases(); }));
    if (candidate.is_prerelease() && !admit) return false;
    return std::all_of(clauses.begin(), clauses.end(),
                       [&](const specifier& s) { return s.contains(candidate, admit); });
}

result<specifier_set> parse_specifier_set(std::string_view text) {
    specifier_set out;
    std::size_t start = 0;
    while (start <= text.size()) {
        const std::size_t comma = std::min(text.find(',', start), text.size());
        const std::string_view clause = strip(text.substr(start, comma - start));
        start = comma + 1;
        if (clause.empty()) continue;
        auto parsed = parse_specifier(clause);
        if (!parsed) return parsed.error();
        out.clauses.push_back(std::move(*parsed));
    }
    return out;
}

}  // namespace wheelhouse::pep440
