// Reading follows what email.parser (policy compat32) and packaging.metadata.parse_email do with a
// METADATA file, with the indentation repair importlib.metadata applies:
//   - lines end in "\n" or "\r\n", and any carriage returns before a line's end go with it (so
//     a value or description never keeps one that a rewrite would then drop); a UTF-8 byte
//     order mark at the start is skipped;
//   - a line starting with a space or a tab continues the header above it; the line break is kept
//     (a folded License or Description keeps its lines), and the continuation lines lose their
//     common indentation, at most 8 characters (setuptools folds with 8 spaces), then a leading
//     '|' when every non-blank continuation line has one (the specification's "7 spaces and a
//     pipe" form); whitespace-only continuation lines become empty lines, and a value whose
//     header line is empty starts on its first continuation line;
//   - whitespace at either end of a value is dropped (a value that starts on a continuation
//     line indented deeper than the ones below it would otherwise start with blanks);
//   - the first empty line ends the headers; everything after it is the description, which wins
//     over a Description header when both are present.
// Refused: text that is not UTF-8 (with the byte offset), a header line without ':', a header
// name with spaces or control characters, a continuation line with no header above it, a
// missing or empty Metadata-Version, Name or Version, and a second one of these three.

#include "wheelhouse/metadata/core_metadata.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "wheelhouse/text/ascii.hpp"
#include "wheelhouse/text/utf8.hpp"

namespace wheelhouse::metadata {
namespace {

constexpr std::size_t max_continuation_indent = 8;
constexpr std::size_t longest_quoted_line = 60;

using text::equals_ignoring_case;
using text::is_blank;

// A line for an error message: cut at a character boundary, quoted.
std::string quote_line(std::string_view line) {
    if (line.size() <= longest_quoted_line) return "'" + std::string(line) + "'";
    std::size_t cut = longest_quoted_line;
    while (cut > 0 && (static_cast<std::uint8_t>(line[cut]) & 0xC0) == 0x80) --cut;
    return "'" + std::string(line.substr(0, cut)) + "...'";
}

// RFC 5322 field names: printable ASCII except ':'.
bool is_header_name(std::string_view name) noexcept {
    if (name.empty()) return false;
    return std::all_of(name.begin(), name.end(), [](char c) { return c > ' ' && c < 0x7F && c != ':'; });
}

void trim_trailing_whitespace(std::string& value) {
    while (!value.empty() && (is_blank(value.back()) || value.back() == '\n' || value.back() == '\r')) value.pop_back();
}

// A header as read, before its continuation lines are joined.
struct raw_header {
    std::string_view name;
    std::string_view first_line;  // the value on the header line itself
    std::vector<std::string_view> continuation;
    std::size_t line_number = 0;
};

std::string join_value(const raw_header& header) {
    std::string value(header.first_line);
    if (!header.continuation.empty()) {
        auto is_blank_line = [](std::string_view line) { return std::all_of(line.begin(), line.end(), is_blank); };
        // The indentation every non-blank continuation line shares, at most 8 characters.
        std::optional<std::string_view> margin;
        for (std::string_view line : header.continuation) {
            if (is_blank_line(line)) continue;
            std::size_t indent = 0;
            while (indent < line.size() && indent < max_continuation_indent && is_blank(line[indent])) ++indent;
            std::string_view own = line.substr(0, indent);
            if (!margin) {
                margin = own;
                continue;
            }
            std::size_t common = 0;
            while (common < margin->size() && common < own.size() && (*margin)[common] == own[common]) ++common;
            margin = margin->substr(0, common);
        }
        std::vector<std::string_view> lines;
        for (std::string_view line : header.continuation)
            lines.push_back(is_blank_line(line) ? std::string_view{} : line.substr(margin ? margin->size() : 0));
        const bool piped = std::all_of(lines.begin(), lines.end(), [](std::string_view line) {
            return line.empty() || line.front() == '|';
        }) && std::any_of(lines.begin(), lines.end(), [](std::string_view line) { return !line.empty(); });
        for (std::string_view line : lines) {
            // "License:" with the text on the lines below starts with that text, not a line break.
            if (!value.empty()) value.push_back('\n');
            value += piped && !line.empty() ? line.substr(1) : line;
        }
    }
    trim_trailing_whitespace(value);
    value.erase(0, std::min(value.find_first_not_of(" \t\r\n"), value.size()));
    return value;
}

// "Name", "Name and Version", "Metadata-Version, Name and Version".
std::string list_names(const std::vector<std::string_view>& names) {
    std::string out;
    for (std::size_t i = 0; i < names.size(); ++i) {
        if (i > 0) out += i + 1 == names.size() ? " and " : ", ";
        out += names[i];
    }
    return out;
}

// The headers, each with its continuation lines, and what follows the first empty line.
struct raw_message {
    std::vector<raw_header> headers;
    std::optional<std::string_view> body;
};

// The header lines up to the first empty one, read as the comment at the top says.
result<raw_message> split_message(std::string_view text) {
    raw_message message;
    auto& headers = message.headers;
    std::size_t pos = 0;
    std::size_t line_number = 0;
    while (pos < text.size()) {
        std::size_t end = text.find('\n', pos);
        const std::size_t next = end == std::string_view::npos ? text.size() : end + 1;
        if (end == std::string_view::npos) end = text.size();
        std::string_view line = text.substr(pos, end - pos);
        while (!line.empty() && line.back() == '\r') line.remove_suffix(1);
        ++line_number;
        pos = next;

        if (line.empty()) {
            message.body = text.substr(pos);
            break;
        }
        if (is_blank(line.front())) {
            if (headers.empty())
                return invalid("METADATA line " + std::to_string(line_number) +
                               " starts with whitespace, which continues a header, but no header comes before it");
            headers.back().continuation.push_back(line);
            continue;
        }
        const std::size_t colon = line.find(':');
        if (colon == std::string_view::npos)
            return invalid("METADATA line " + std::to_string(line_number) + " is not a 'Name: value' header: " +
                           quote_line(line) + " has no ':' (the description goes after an empty line)");
        const std::string_view name = line.substr(0, colon);
        if (!is_header_name(name))
            return invalid("METADATA line " + std::to_string(line_number) + ": " + quote_line(name) +
                           " is not a header name (no spaces or control characters before the ':')");
        std::string_view value = line.substr(colon + 1);
        while (!value.empty() && is_blank(value.front())) value.remove_prefix(1);
        headers.push_back(raw_header{name, value, {}, line_number});
    }
    return message;
}

constexpr std::string_view required_fields[] = {"Metadata-Version", "Name", "Version"};

// The headers as fields, each value joined; a second Metadata-Version, Name or Version is refused.
result<core_metadata> join_fields(const std::vector<raw_header>& headers) {
    core_metadata metadata;
    metadata.fields.reserve(headers.size());
    std::size_t first_line_of[std::size(required_fields)] = {};
    for (const auto& header : headers) {
        for (std::size_t i = 0; i < std::size(required_fields); ++i) {
            if (!equals_ignoring_case(header.name, required_fields[i])) continue;
            if (first_line_of[i] != 0)
                return invalid("METADATA line " + std::to_string(header.line_number) + " is a second " +
                               std::string(required_fields[i]) + " header (the first is on line " +
                               std::to_string(first_line_of[i]) + ")");
            first_line_of[i] = header.line_number;
        }
        metadata.fields.emplace_back(std::string(header.name), join_value(header));
    }
    return metadata;
}

// Metadata-Version, Name and Version are there, and none is empty.
result<void> check_required(const core_metadata& metadata) {
    std::vector<std::string_view> missing;
    for (std::string_view name : required_fields) {
        if (!metadata.get(name)) missing.push_back(name);
    }
    if (!missing.empty())
        return invalid("METADATA lacks the required " + list_names(missing) +
                       (missing.size() == 1 ? " header" : " headers"));
    for (std::string_view name : required_fields) {
        if (metadata.get(name)->empty()) return invalid("METADATA's " + std::string(name) + " header is empty");
    }
    return {};
}

// The body, else the Description header. One line ending for every caller: "\r\n" (and
// "\r\r\n") in the body becomes "\n".
std::string description_of(std::optional<std::string_view> body, const core_metadata& metadata) {
    std::string description;
    if (body && !body->empty()) {
        description.reserve(body->size());
        for (char c : *body) {
            if (c == '\n') {
                while (!description.empty() && description.back() == '\r') description.pop_back();
            }
            description.push_back(c);
        }
    } else if (auto header = metadata.get("Description")) {
        description = std::string(*header);
    }
    return description;
}

}  // namespace

std::optional<std::string_view> core_metadata::get(std::string_view field) const {
    for (const auto& [name, value] : fields) {
        if (equals_ignoring_case(name, field)) return std::string_view(value);
    }
    return std::nullopt;
}

std::vector<std::string_view> core_metadata::get_all(std::string_view field) const {
    std::vector<std::string_view> values;
    for (const auto& [name, value] : fields) {
        if (equals_ignoring_case(name, field)) values.emplace_back(value);
    }
    return values;
}

result<core_metadata> parse_core_metadata(std::string_view text) {
    if (auto fault = text::find_utf8_fault(text)) {
        const auto line = 1 + std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(fault->offset), '\n');
        return invalid("METADATA is not valid UTF-8: " + fault->what + " at byte offset " +
                       std::to_string(fault->offset) + " (line " + std::to_string(line) + ")");
    }
    constexpr std::string_view byte_order_mark = "\xEF\xBB\xBF";
    if (text.substr(0, byte_order_mark.size()) == byte_order_mark) text.remove_prefix(byte_order_mark.size());

    auto message = split_message(text);
    if (!message) return message.error();
    auto metadata = join_fields(message->headers);
    if (!metadata) return metadata.error();
    if (auto present = check_required(*metadata); !present) return present.error();
    metadata->description = description_of(message->body, *metadata);
    return metadata;
}

}  // namespace wheelhouse::metadata
