// PEP 503's HTML project page, read into project_page (page_builder.hpp) in one forward pass.
// Not a general HTML parser: it reads the tags such a page is made of (<a>, <meta>, <base>) as
// HTML5 tokenises them, skips the others, comments and raw text (<script>, <style>, <title>,
// <textarea>), and refuses what a page of links has no use for and two readers could take two
// ways: a link inside a link or holding other tags, an attribute twice in one tag, a link,
// comment or tag left open at the end. Character references are decoded as pip's html.unescape
// decodes them where both agree (&amp; &lt; &gt; &quot; &apos; and numeric ones); a link holding
// any other is left out.

#include <optional>
#include <string>
#include <vector>

#include "wheelhouse/text/ascii.hpp"
#include "wheelhouse/text/quoted.hpp"
#include "wheelhouse/text/utf8.hpp"
#include "wheelhouse/upstream/page_builder.hpp"

namespace wheelhouse::upstream::detail {
namespace {

using text::quoted;

struct attribute {
    std::string name;  // lower case
    std::string raw;   // the value as written, references undecoded
};

bool is_letter(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f'; }

void append_utf8(std::string& out, unsigned long code) {
    if (code < 0x80) {
        out.push_back(static_cast<char>(code));
    } else if (code < 0x800) {
        out.push_back(static_cast<char>(0xC0 | (code >> 6)));
        out.push_back(static_cast<char>(0x80 | (code & 0x3F)));
    } else if (code < 0x10000) {
        out.push_back(static_cast<char>(0xE0 | (code >> 12)));
        out.push_back(static_cast<char>(0x80 | ((code >> 6) & 0x3F)));
        out.push_back(static_cast<char>(0x80 | (code & 0x3F)));
    } else {
        out.push_back(static_cast<char>(0xF0 | (code >> 18)));
        out.push_back(static_cast<char>(0x80 | ((code >> 12) & 0x3F)));
        out.push_back(static_cast<char>(0x80 | ((code >> 6) & 0x3F)));
        out.push_back(static_cast<char>(0x80 | (code & 0x3F)));
    }
}

// "&#38;", "&#x26;": the code point's UTF-8 at `text`'s start ("&#" consumed), or nullopt.
std::optional<std::size_t> decode_numeric(std::string_view text, std::string& out) {
    const bool hex = !text.empty() && (text[0] == 'x' || text[0] == 'X');
    const auto digits = text.substr(hex ? 1 : 0);
    const auto end = digits.find(';');
    if (end == 0 || end == std::string_view::npos || end > 8) return std::nullopt;
    unsigned long code = 0;
    for (const char c : digits.substr(0, end)) {
        const int value = c >= '0' && c <= '9'                   ? c - '0'
                          : hex && c >= 'a' && c <= 'f'          ? c - 'a' + 10
                          : hex && c >= 'A' && c <= 'F'          ? c - 'A' + 10
                                                                 : -1;
        if (value < 0) return std::nullopt;
        code = code * (hex ? 16 : 10) + static_cast<unsigned long>(value);
    }
    if (code == 0 || code > 0x10FFFF || (code >= 0xD800 && code <= 0xDFFF)) return std::nullopt;
    append_utf8(out, code);
    return (hex ? 1 : 0) + end + 1;
}

// The text with its character references decoded; nullopt when it holds one this reader does
// not decode the way pip would (a named reference other than the five, a numeric one that is
// no character). An '&' that starts no reference stays as it is, as in HTML.
std::optional<std::string> decode_references(std::string_view raw) {
    static constexpr std::pair<std::string_view, char> named[] = {
        {"amp;", '&'}, {"lt;", '<'}, {"gt;", '>'}, {"quot;", '"'}, {"apos;", '\''}};
    std::string out;
    out.reserve(raw.size());
    for (std::size_t at = 0; at < raw.size(); ++at) {
        if (raw[at] != '&') {
            out.push_back(raw[at]);
            continue;
        }
        const auto rest = raw.substr(at + 1);
        if (!rest.empty() && rest[0] == '#') {
            const auto used = decode_numeric(rest.substr(1), out);
            if (!used) return std::nullopt;
            at += 1 + *used;
            continue;
        }
        if (rest.empty() || !is_letter(rest[0])) {
            out.push_back('&');
            continue;
        }
        bool decoded = false;
        for (const auto& [name, character] : named) {
            if (rest.starts_with(name)) {
                out.push_back(character);
                at += name.size();
                decoded = true;
                break;
            }
        }
        if (!decoded) return std::nullopt;  // html.unescape knows 2,231 names, some without ';'
    }
    return out;
}

// A link as read, its references decoded when the page ends (a <base> later in the page still
// counts for it, as pip reads it).
struct raw_link {
    std::vector<attribute> attributes;
    std::string text;
};

class html_reader {
public:
    explicit html_reader(std::string_view body) : body_(body) {}

    result<void> read() {
        while (at_ < body_.size()) {
            const auto open = body_.find('<', at_);
            if (open == std::string_view::npos) break;
            if (link_) link_->text.append(body_.substr(at_, open - at_));
            at_ = open;
            if (auto step = read_markup(); !step) return step;
        }
        if (link_) return invalid("a link (<a>) is left open at the end");
        return {};
    }

    std::vector<raw_link> links;
    std::optional<std::string> base;
    std::optional<std::string> declared_version, status, status_reason;

private:
    // At a '<': a comment, a declaration, an end tag, a start tag, or a '<' of text.
    result<void> read_markup() {
        const auto rest = body_.substr(at_);
        if (rest.starts_with("<!--")) return skip_past("-->", 2, "a comment");
        if (rest.starts_with("<!") || rest.starts_with("<?")) return skip_past(">", 2, "a declaration");
        if (rest.size() >= 3 && rest[1] == '/' && is_letter(rest[2])) return read_end_tag();
        if (rest.size() >= 2 && is_letter(rest[1])) return read_start_tag();
        if (link_) link_->text.push_back('<');
        ++at_;
        return {};
    }

    result<void> skip_past(std::string_view end, std::size_t from, std::string_view what) {
        const auto found = body_.find(end, at_ + from);
        if (found == std::string_view::npos) return invalid(std::string(what) + " is left open at the end");
        at_ = found + end.size();
        return {};
    }

    std::string read_name() {
        std::string name;
        while (at_ < body_.size() && !is_space(body_[at_]) && body_[at_] != '/' && body_[at_] != '>')
            name.push_back(text::to_lower(body_[at_++]));
        return name;
    }

    result<void> read_end_tag() {
        at_ += 2;
        const auto name = read_name();
        if (auto closed = skip_past(">", 0, "a tag"); !closed) return closed;
        if (name == "a" && link_) {
            if (links.size() >= max_files) return invalid("it has more than " + std::to_string(max_files) + " links");
            links.push_back(std::move(*link_));
            link_.reset();
        }
        return {};
    }

    result<void> read_start_tag() {
        ++at_;
        const auto name = read_name();
        std::vector<attribute> attributes;
        if (auto read = read_attributes(attributes); !read) return read;
        if (link_) return invalid("a tag " + text::quoted(name, 40) + " is inside a link (<a>)");
        if (name == "a") {
            link_.emplace();
            link_->attributes = std::move(attributes);
        } else if (name == "meta") {
            return take_meta(attributes);
        } else if (name == "base") {
            if (const auto* href = find(attributes, "href"); href && !base) base = href->raw;
        } else if (name == "script" || name == "style" || name == "title" || name == "textarea") {
            return skip_raw_text(name);
        }
        return {};
    }

    // HTML5's attribute states: names up to '=', blanks, '/' or '>'; values quoted or bare.
    result<void> read_attributes(std::vector<attribute>& out) {
        for (;;) {
            while (at_ < body_.size() && (is_space(body_[at_]) || body_[at_] == '/')) ++at_;
            if (at_ >= body_.size()) return invalid("a tag is left open at the end");
            if (body_[at_] == '>') {
                ++at_;
                return {};
            }
            attribute next;
            do next.name.push_back(text::to_lower(body_[at_++]));
            while (at_ < body_.size() && !is_space(body_[at_]) && body_[at_] != '/' && body_[at_] != '>' &&
                   body_[at_] != '=');
            while (at_ < body_.size() && is_space(body_[at_])) ++at_;
            if (at_ < body_.size() && body_[at_] == '=') {
                ++at_;
                while (at_ < body_.size() && is_space(body_[at_])) ++at_;
                if (auto value = read_value(next.raw); !value) return value;
            }
            if (find(out, next.name)) return invalid("a tag has the attribute " + quoted(next.name) + " twice");
            if (out.size() >= 64) return invalid("a tag has more than 64 attributes");
            out.push_back(std::move(next));
        }
    }

    result<void> read_value(std::string& out) {
        if (at_ < body_.size() && (body_[at_] == '"' || body_[at_] == '\'')) {
            const auto end = body_.find(body_[at_], at_ + 1);
            if (end == std::string_view::npos) return invalid("an attribute's quoted value is left open at the end");
            out.assign(body_.substr(at_ + 1, end - at_ - 1));
            at_ = end + 1;
            return {};
        }
        const auto start = at_;
        while (at_ < body_.size() && !is_space(body_[at_]) && body_[at_] != '>') ++at_;
        out.assign(body_.substr(start, at_ - start));
        return {};
    }

    result<void> skip_raw_text(std::string_view name) {
        for (std::size_t from = at_;;) {
            const auto close = body_.find("</", from);
            if (close == std::string_view::npos) return invalid("a <" + std::string(name) + "> is left open at the end");
            if (text::starts_with_ignoring_case(body_.substr(close + 2), name)) {
                at_ = close;
                return {};
            }
            from = close + 2;
        }
    }

    result<void> take_meta(const std::vector<attribute>& attributes) {
        const auto* name = find(attributes, "name");
        const auto* content = find(attributes, "content");
        if (!name || !content) return {};
        std::optional<std::string>* slot = name->raw == "pypi:repository-version"      ? &declared_version
                                           : name->raw == "pypi:project-status"        ? &status
                                           : name->raw == "pypi:project-status-reason" ? &status_reason
                                                                                       : nullptr;
        if (!slot) return {};
        auto value = decode_references(content->raw);
        if (!value) return invalid("its <meta name=" + quoted(name->raw) + "> holds a character reference it cannot read");
        if (*slot && **slot != *value) return invalid("it says <meta name=" + quoted(name->raw) + "> twice, differently");
        *slot = std::move(*value);
        return {};
    }

    static const attribute* find(const std::vector<attribute>& attributes, std::string_view name) {
        for (const auto& each : attributes) {
            if (each.name == name) return &each;
        }
        return nullptr;
    }

    std::string_view body_;
    std::size_t at_ = 0;
    std::optional<raw_link> link_;
};

// One <a>'s attributes as a listed_link; nullopt (left out, with the reason) when a value holds
// a reference this reader does not decode, or the link has no href (no file).
std::optional<listed_link> link_of(const raw_link& raw, page_builder& built) {
    listed_link link;
    const auto decoded = [&](const attribute& each) { return decode_references(each.raw); };
    bool has_href = false;
    for (const auto& each : raw.attributes) {
        auto value = decoded(each);
        if (!value && each.name == "data-provenance") continue;  // pip never reads it: the file stays, without it
        if (!value) {
            built.leave_out("a link's " + each.name + " holds a character reference this index does not decode");
            return std::nullopt;
        }
        auto& out = link.attributes;
        if (each.name == "href") {
            link.reference = std::move(*value);
            has_href = true;
        } else if (each.name == "data-requires-python") {
            out.requires_python = std::move(*value);
        } else if (each.name == "data-yanked") {
            out.yanked_reason = std::move(*value);
        } else if (each.name == "data-provenance") {
            link.provenance_reference = std::move(*value);
        } else if (each.name == "data-core-metadata" || (each.name == "data-dist-info-metadata" && !out.metadata_sha256)) {
            auto digest = sha256_named_in(*value);
            out.metadata_sha256 = digest.empty() ? std::nullopt : std::optional<std::string>(std::move(digest));
        }
    }
    auto text = decode_references(raw.text);
    if (!text) {
        built.leave_out("a link's text holds a character reference this index does not decode");
        return std::nullopt;
    }
    if (!has_href) return std::nullopt;
    // Browsers and pip's parser ignore the line breaks a page wraps its link text in.
    std::string_view shown = *text;
    while (!shown.empty() && is_space(shown.front())) shown.remove_prefix(1);
    while (!shown.empty() && is_space(shown.back())) shown.remove_suffix(1);
    link.link_text = std::string(shown);
    link.check_text = true;
    return link;
}

}  // namespace

result<project_page> parse_html_page(std::string_view body, const page_source& source) {
    if (const auto fault = text::find_utf8_fault(body))
        return invalid("it is not UTF-8: " + fault->what + " at byte " + std::to_string(fault->offset));
    page_builder built(source, body.size());
    html_reader reader(body);
    if (auto read = reader.read(); !read) return read.error();
    auto& page = built.page();
    if (reader.declared_version) {
        auto version = supported_api_version(*reader.declared_version);
        if (!version) return version.error();
        page.api_version = *version;
    }
    if (reader.status) page.status = known_status(*reader.status);
    if (page.status && reader.status_reason && reader.status_reason->size() <= max_text_length)
        page.status_reason = std::move(reader.status_reason);
    if (reader.base) {
        const auto base = decode_references(*reader.base);
        if (!base) return invalid("its <base href> holds a character reference it cannot read");
        if (auto based = built.set_base(*base); !based) return based.error();
    }
    for (const auto& raw : reader.links) {
        auto link = link_of(raw, built);
        if (!link) continue;
        if (auto added = built.add(std::move(*link)); !added) return added.error();
    }
    return std::move(built).finish();
}

}  // namespace wheelhouse::upstream::detail
