#include "wheelhouse/s3/xml_answer.hpp"

#include <algorithm>
#include <charconv>

namespace wheelhouse::s3 {
namespace {

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }
bool ends_name(char c) { return is_space(c) || c == '/' || c == '>' || c == '=' || c == '<'; }

// An element's name for a message: "<Name>" when short printable ASCII, else a description.
std::string shown(std::string_view name) {
    const bool plain = name.size() <= 64 && std::all_of(name.begin(), name.end(), [](char c) {
        return c > 0x20 && c < 0x7F;
    });
    return plain ? "<" + std::string(name) + ">" : std::string("an element of an unprintable name");
}

void append_utf8(std::string& out, std::uint32_t code) {
    if (code < 0x80) {
        out += static_cast<char>(code);
    } else if (code < 0x800) {
        out += static_cast<char>(0xC0 | (code >> 6));
        out += static_cast<char>(0x80 | (code & 0x3F));
    } else if (code < 0x10000) {
        out += static_cast<char>(0xE0 | (code >> 12));
        out += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
        out += static_cast<char>(0x80 | (code & 0x3F));
    } else {
        out += static_cast<char>(0xF0 | (code >> 18));
        out += static_cast<char>(0x80 | ((code >> 12) & 0x3F));
        out += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
        out += static_cast<char>(0x80 | (code & 0x3F));
    }
}

class reader {
public:
    explicit reader(std::string_view document) : text_(document) {}

    result<xml_element> document() {
        if (text_.substr(0, 3) == "\xEF\xBB\xBF") at_ = 3;
        if (auto skipped = skip_misc(); !skipped) return skipped.error();
        if (at_ >= text_.size() || text_[at_] != '<') return refuse("the answer has no root element");
        xml_element root;
        if (auto read = element(root, 1); !read) return read.error();
        if (auto skipped = skip_misc(); !skipped) return skipped.error();
        if (at_ != text_.size()) return refuse("something follows the root element");
        return root;
    }

private:
    error refuse(std::string_view why) const {
        return invalid("the object store's XML answer cannot be read (" + std::string(why) + " at byte " +
                       std::to_string(at_) + ")");
    }

    bool starts(std::string_view prefix) const { return text_.substr(at_, prefix.size()) == prefix; }

    // Skips to just past `end`; false when it never comes.
    bool skip_past(std::string_view end) {
        const auto found = text_.find(end, at_);
        if (found == std::string_view::npos) return false;
        at_ = found + end.size();
        return true;
    }

    // One comment or processing instruction, at a "<?" or "<!" that is not CDATA.
    result<void> skip_markup() {
        if (starts("<?")) {
            if (!skip_past("?>")) return refuse("an unterminated processing instruction");
        } else if (starts("<!--")) {
            if (!skip_past("-->")) return refuse("an unterminated comment");
        } else {
            return refuse("a DOCTYPE or declaration, which this reader never follows");
        }
        return {};
    }

    // Whitespace, comments and processing instructions, before and after the root.
    result<void> skip_misc() {
        while (true) {
            while (at_ < text_.size() && is_space(text_[at_])) ++at_;
            if (!starts("<?") && !starts("<!")) return {};
            if (auto skipped = skip_markup(); !skipped) return skipped;
        }
    }

    std::string_view name() {
        const std::size_t start = at_;
        while (at_ < text_.size() && !ends_name(text_[at_])) ++at_;
        return text_.substr(start, at_ - start);
    }

    // Attributes up to '>' or "/>"; returns whether the element closed itself.
    result<bool> attributes() {
        while (true) {
            while (at_ < text_.size() && is_space(text_[at_])) ++at_;
            if (starts("/>")) return (at_ += 2, true);
            if (starts(">")) return (at_ += 1, false);
            if (name().empty()) return refuse("a malformed attribute");
            while (at_ < text_.size() && is_space(text_[at_])) ++at_;
            if (!starts("=")) return refuse("an attribute without a value");
            ++at_;
            while (at_ < text_.size() && is_space(text_[at_])) ++at_;
            if (at_ >= text_.size() || (text_[at_] != '"' && text_[at_] != '\'')) return refuse("an unquoted attribute");
            const char quote = text_[at_++];
            const auto end = text_.find(quote, at_);
            if (end == std::string_view::npos) return refuse("an unterminated attribute");
            at_ = end + 1;
        }
    }

    result<void> entity(std::string& out) {
        // Looks no further than the longest reference (&#x10FFFF;), so '&' after '&' stays linear.
        const auto near = text_.substr(at_, 11).find(';');
        if (near == std::string_view::npos) return refuse("an unterminated entity");
        const std::size_t end = at_ + near;
        const std::string_view body = text_.substr(at_ + 1, end - at_ - 1);
        static constexpr std::pair<std::string_view, char> named[] = {
            {"amp", '&'}, {"lt", '<'}, {"gt", '>'}, {"quot", '"'}, {"apos", '\''}};
        for (const auto& [spelling, c] : named)
            if (body == spelling) return (out += c, at_ = end + 1, result<void>{});
        std::uint32_t code = 0;
        const bool hex = body.starts_with("#x");
        const std::string_view digits = body.substr(std::min<std::size_t>(hex ? 2 : 1, body.size()));
        const auto parsed = std::from_chars(digits.data(), digits.data() + digits.size(), code, hex ? 16 : 10);
        if (!body.starts_with('#') || digits.empty() || parsed.ec != std::errc{} ||
            parsed.ptr != digits.data() + digits.size() || code == 0 || code > 0x10FFFF ||
            (code >= 0xD800 && code <= 0xDFFF))
            return refuse("an entity other than &amp; &lt; &gt; &quot; &apos; or a character reference");
        append_utf8(out, code);
        at_ = end + 1;
        return {};
    }

    result<void> element(xml_element& into, std::size_t depth) {
        if (depth > max_xml_depth) return refuse("elements nested deeper than " + std::to_string(max_xml_depth));
        ++at_;  // '<'
        into.name = std::string(name());
        if (into.name.empty()) return refuse("an element without a name");
        auto closed = attributes();
        if (!closed) return closed.error();
        if (*closed) return {};
        while (true) {
            if (at_ >= text_.size()) return refuse(shown(into.name) + " is never closed");
            const char c = text_[at_];
            if (c == '&') {
                if (auto decoded = entity(into.text); !decoded) return decoded;
            } else if (c != '<') {
                const auto stop = std::min(text_.find_first_of("<&", at_), text_.size());
                into.text.append(text_.substr(at_, stop - at_));
                at_ = stop;
            } else if (starts("</")) {
                at_ += 2;
                if (name() != into.name) return refuse("a closing tag that does not match " + shown(into.name));
                while (at_ < text_.size() && is_space(text_[at_])) ++at_;
                if (!starts(">")) return refuse("a malformed closing tag");
                ++at_;
                return {};
            } else if (starts("<![CDATA[")) {
                const auto end = text_.find("]]>", at_ + 9);
                if (end == std::string_view::npos) return refuse("an unterminated CDATA section");
                into.text.append(text_.substr(at_ + 9, end - at_ - 9));
                at_ = end + 3;
            } else if (starts("<?") || starts("<!")) {
                if (auto skipped = skip_markup(); !skipped) return skipped;
            } else {
                if (auto read = element(into.children.emplace_back(), depth + 1); !read) return read;
            }
        }
    }

    std::string_view text_;
    std::size_t at_ = 0;
};

result<xml_element> rooted(std::string_view document, std::string_view root_name) {
    auto root = parse_xml(document);
    if (!root) return root;
    if (root->name != root_name)
        return invalid("the object store answered " + shown(root->name) + " where <" + std::string(root_name) +
                       "> belongs");
    return root;
}

}  // namespace

const xml_element* xml_element::child(std::string_view child_name) const noexcept {
    for (const auto& element : children)
        if (element.name == child_name) return &element;
    return nullptr;
}

std::string_view xml_element::child_text(std::string_view child_name) const noexcept {
    const auto* found = child(child_name);
    return found ? std::string_view(found->text) : std::string_view();
}

result<xml_element> parse_xml(std::string_view document) { return reader(document).document(); }

result<error_answer> error_of(std::string_view document) {
    auto root = parse_xml(document);
    if (!root) return root.error();
    if (root->name != "Error") return error_answer{};
    return error_answer{std::string(root->child_text("Code")), std::string(root->child_text("Message"))};
}

result<list_page> list_page_of(std::string_view document) {
    auto root = rooted(document, "ListBucketResult");
    if (!root) return root.error();
    list_page page;
    for (const auto& element : root->children) {
        if (element.name != "Contents") continue;
        listed_object object{std::string(element.child_text("Key")), 0};
        const std::string_view size = element.child_text("Size");
        const auto parsed = std::from_chars(size.data(), size.data() + size.size(), object.size);
        if (object.key.empty() || size.empty() || parsed.ec != std::errc{} || parsed.ptr != size.data() + size.size())
            return invalid("the object store listed an object without a key or a size");
        page.objects.push_back(std::move(object));
    }
    if (root->child_text("IsTruncated") == "true") {
        page.next_continuation_token = std::string(root->child_text("NextContinuationToken"));
        if (page.next_continuation_token.empty())
            return invalid("the object store said its listing goes on but gave no continuation token");
    }
    return page;
}

result<std::string> upload_id_of(std::string_view document) {
    auto root = rooted(document, "InitiateMultipartUploadResult");
    if (!root) return root.error();
    std::string id(root->child_text("UploadId"));
    if (id.empty()) return invalid("the object store began a multipart upload without an UploadId");
    return id;
}

result<void> completion_of(std::string_view document) {
    auto root = rooted(document, "CompleteMultipartUploadResult");
    if (!root) return root.error();
    return {};
}

result<std::vector<open_upload>> open_uploads_of(std::string_view document) {
    auto root = rooted(document, "ListMultipartUploadsResult");
    if (!root) return root.error();
    std::vector<open_upload> uploads;
    for (const auto& element : root->children) {
        if (element.name != "Upload") continue;
        open_upload upload{std::string(element.child_text("Key")), std::string(element.child_text("UploadId"))};
        if (upload.key.empty() || upload.upload_id.empty())
            return invalid("the object store listed an upload without a key or an UploadId");
        uploads.push_back(std::move(upload));
    }
    return uploads;
}

}  // namespace wheelhouse::s3
