#include "wheelhouse/pep508/requirement.hpp"

#include <algorithm>

#include <boost/url/parse.hpp>

#include "wheelhouse/pep503/name.hpp"
#include "wheelhouse/text/ascii.hpp"
#include "wheelhouse/text/quoted.hpp"

// name_req = name wsp* extras? wsp* versionspec? wsp* quoted_marker?
// url_req  = name wsp* extras? wsp* urlspec wsp+ quoted_marker?
// Read left to right; the version specifiers are the text up to ';' (or inside the
// parentheses), split on ',' and read by pep440::parse_specifier.

namespace wheelhouse::pep508 {
namespace {

using text::quoted;

bool is_alphanumeric(char c) noexcept {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}
bool is_name_char(char c) noexcept { return is_alphanumeric(c) || c == '.' || c == '_' || c == '-'; }
using text::is_blank;
using text::trim;

class parser {
public:
    explicit parser(std::string_view text) : text_(text) {}

    result<requirement> run() {
        const auto control = std::find_if(text_.begin(), text_.end(), [](char c) {
            return (static_cast<unsigned char>(c) < 0x20 && c != '\t') || c == 0x7f;
        });
        if (control != text_.end()) return fail("it holds a control character; write it on one line");
        skip_space();
        auto name = read_name("project name");
        if (!name) return name.error();
        out_.name = std::move(*name);
        skip_space();
        if (at('[')) {
            if (auto extras = read_extras(); !extras) return extras.error();
            skip_space();
        }
        auto rest = at('@') ? read_url() : read_specifiers();
        if (!rest) return rest.error();
        return std::move(out_);
    }

private:
    bool at(char c) const noexcept { return position_ < text_.size() && text_[position_] == c; }
    void skip_space() noexcept {
        while (position_ < text_.size() && is_blank(text_[position_])) ++position_;
    }
    error fail(std::string_view what) const {
        return invalid("requirement " + quoted(text_) + ": " + std::string(what));
    }

    // A PEP 508 name: letters and digits, with '.', '_' and '-' between them.
    result<std::string> read_name(std::string_view what) {
        const std::size_t start = position_;
        while (position_ < text_.size() && is_name_char(text_[position_])) ++position_;
        const std::string_view name = text_.substr(start, position_ - start);
        if (name.empty()) {
            const std::string_view article = what.starts_with('e') ? "an " : "a ";
            return fail("expected " + std::string(article) + std::string(what) + " at " +
                        quoted(text_.substr(start), 40) + " (letters, digits, '.', '_' and '-')");
        }
        if (!is_alphanumeric(name.front()) || !is_alphanumeric(name.back())) {
            return fail("the " + std::string(what) + " " + quoted(name, 40) +
                        " must start and end with a letter or digit");
        }
        if (position_ < text_.size() && static_cast<unsigned char>(text_[position_]) >= 0x80) {
            return fail("the " + std::string(what) + " goes on with a non-ASCII character; names are ASCII "
                        "letters, digits, '.', '_' and '-'");
        }
        return std::string(name);
    }

    result<void> read_extras() {
        ++position_;  // '['
        skip_space();
        if (at(']')) {
            ++position_;
            return {};
        }
        while (true) {
            auto extra = read_name("extra name");
            if (!extra) return extra.error();
            out_.extras.push_back(std::move(*extra));
            skip_space();
            if (at(']')) {
                ++position_;
                return {};
            }
            if (!at(',')) {
                if (position_ < text_.size() && is_name_char(text_[position_])) {
                    return fail("extras are separated by ','");
                }
                return fail("expected ',' or ']' after the extra " + quoted(out_.extras.back(), 40));
            }
            ++position_;
            skip_space();
        }
    }

    result<void> read_url() {
        ++position_;  // '@'
        skip_space();
        const std::size_t start = position_;
        while (position_ < text_.size() && !is_blank(text_[position_])) ++position_;
        const std::string_view url = text_.substr(start, position_ - start);
        if (url.empty()) return fail("expected a URL after '@'");
        if (auto checked = check_url(url); !checked) return checked;
        out_.url = std::string(url);
        skip_space();
        if (position_ == text_.size()) return {};
        if (!at(';')) {
            if (url.ends_with(';')) return fail("put a space between the URL and the ';' before the marker");
            return fail("expected ';' and a marker after the URL, or the end");
        }
        return read_marker();
    }

    // What packaging and pip can fetch: an absolute URI with a host, or file://.
    result<void> check_url(std::string_view url) const {
        const auto parsed = boost::urls::parse_uri(url);
        if (!parsed) {
            return fail("the URL " + quoted(url, 60) + " is not a valid absolute URL (" + parsed.error().message() +
                        ")");
        }
        if (parsed->scheme() == "file") {
            if (!url.starts_with("file://")) return fail("write a file URL as file:///path");
            return {};
        }
        if (!parsed->has_authority() || parsed->encoded_authority().empty()) {
            return fail("the URL " + quoted(url, 60) + " has no host; write it as scheme://host/path");
        }
        return {};
    }

    result<void> read_specifiers() {
        std::string_view specifiers;
        bool parenthesised = false;
        if (at('(')) {
            const std::size_t close = text_.find(')', position_);
            if (close == std::string_view::npos) return fail("a '(' without its ')'");
            specifiers = text_.substr(position_ + 1, close - position_ - 1);
            parenthesised = true;
            position_ = close + 1;
            skip_space();
            if (position_ < text_.size() && !at(';')) return fail("expected ';' and a marker after ')', or the end");
        } else {
            const std::size_t end = std::min(text_.find(';', position_), text_.size());
            specifiers = text_.substr(position_, end - position_);
            position_ = end;
        }
        if (auto parsed = read_specifier_list(specifiers, parenthesised); !parsed) return parsed;
        if (position_ == text_.size()) return {};
        return read_marker();
    }

    // version_many = version_one (wsp* ',' version_one)*
    result<void> read_specifier_list(std::string_view list, bool parenthesised) {
        if (trim(list).empty()) {
            if (parenthesised) return fail("empty parentheses: put version specifiers in them, or drop them");
            return {};
        }
        std::size_t start = 0;
        while (start <= list.size()) {
            const std::size_t comma = std::min(list.find(',', start), list.size());
            const std::string_view clause = trim(list.substr(start, comma - start));
            start = comma + 1;
            if (clause.empty()) {
                return fail("an empty version specifier between commas, or a ',' at the end; remove the extra ','");
            }
            auto parsed = pep440::parse_specifier(clause);
            if (!parsed) return fail(parsed.error().message);
            out_.specifiers.clauses.push_back(std::move(*parsed));
        }
        return {};
    }

    result<void> read_marker() {
        ++position_;  // ';'
        skip_space();
        auto parsed = parse_marker(text_.substr(position_));
        if (!parsed) return fail(parsed.error().message);
        out_.marker = std::move(*parsed);
        position_ = text_.size();
        return {};
    }

    std::string_view text_;
    std::size_t position_ = 0;
    requirement out_;
};

}  // namespace

std::string requirement::to_string() const {
    std::string out = pep503::normalize(name);
    std::vector<std::string> normalized;
    for (const auto& extra : extras) normalized.push_back(pep503::normalize(extra));
    std::sort(normalized.begin(), normalized.end());
    normalized.erase(std::unique(normalized.begin(), normalized.end()), normalized.end());
    if (!normalized.empty()) {
        out += '[';
        for (std::size_t i = 0; i < normalized.size(); ++i) out += (i == 0 ? "" : ",") + normalized[i];
        out += ']';
    }
    if (url) {
        out += " @ " + *url;
        if (marker) out += " ; " + marker->to_string();
        return out;
    }
    out += specifiers.to_string();
    if (marker) out += "; " + marker->to_string();
    return out;
}

result<requirement> parse_requirement(std::string_view text) { return parser(text).run(); }

}  // namespace wheelhouse::pep508
