#include "wheelhouse/upload/multipart_parser.hpp"

#include <algorithm>
#include <cassert>
#include <functional>

#include "wheelhouse/text/ascii.hpp"

namespace wheelhouse::upload {
namespace {

constexpr std::size_t max_boundary_length = 70;  // RFC 2046 section 5.1.1

using text::equals_ignoring_case;
using text::is_blank;
using text::to_lower;
using text::trim;

// RFC 2046 bchars: what a boundary may be made of.
bool is_boundary_char(char c) noexcept {
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')) return true;
    return std::string_view("'()+_,-./:=? ").find(c) != std::string_view::npos;
}

// Shows a client's text in a message without letting control bytes into logs.
std::string printable(std::string_view text, std::size_t limit = 60) {
    std::string out;
    for (char c : text.substr(0, limit)) {
        const auto byte = static_cast<unsigned char>(c);
        out.push_back(byte < 0x20 || byte == 0x7f ? '?' : c);
    }
    if (text.size() > limit) out += "...";
    return out;
}

struct parameter {
    std::string name;  // lower-cased
    std::string value;
};

// A quoted-string starting at text[0] == '"'. Undoes `\"` and `\\`; any other backslash is
// kept, since HTML5 encoders send Windows paths with backslashes unescaped.
result<std::pair<std::string, std::size_t>> parse_quoted(std::string_view text, std::string_view header_name) {
    assert(!text.empty() && text.front() == '"');
    std::string value;
    for (std::size_t i = 1; i < text.size(); ++i) {
        const char c = text[i];
        if (c == '\\' && i + 1 < text.size() && (text[i + 1] == '"' || text[i + 1] == '\\')) {
            value.push_back(text[++i]);
        } else if (c == '"') {
            return std::pair{std::move(value), i + 1};
        } else {
            value.push_back(c);
        }
    }
    return invalid("unterminated quoted string in " + std::string(header_name));
}

// The `; name=value; name="value"` list after a media type or disposition type.
result<std::vector<parameter>> parse_parameters(std::string_view text, std::string_view header_name) {
    std::vector<parameter> parameters;
    const std::string where(header_name);
    for (;;) {
        text = trim(text);
        if (text.empty()) return parameters;
        if (text.front() != ';') {
            return invalid("unexpected '" + printable(text) + "' in " + where + ": parameters are separated by ';'");
        }
        text = trim(text.substr(1));
        if (text.empty() || text.front() == ';') continue;  // tolerate "a;;b" and a trailing ';'

        const auto name_end = text.find_first_of("=; \t");
        const auto name = text.substr(0, name_end);
        if (name.empty()) return invalid("a parameter in " + where + " has no name");
        text = trim(text.substr(name.size()));
        if (text.empty() || text.front() != '=') {
            return invalid("parameter '" + printable(name) + "' in " + where + " has no value");
        }
        text = trim(text.substr(1));
        std::string value;
        if (!text.empty() && text.front() == '"') {
            auto quoted = parse_quoted(text, where);
            if (!quoted) return quoted.error();
            value = std::move(quoted->first);
            text.remove_prefix(quoted->second);
        } else {
            const auto raw = trim(text.substr(0, text.find(';')));
            if (raw.empty()) return invalid("parameter '" + printable(name) + "' in " + where + " has an empty value");
            value = std::string(raw);
            text.remove_prefix(std::min(text.size(), text.find(';')));
        }
        parameters.push_back({to_lower(name), std::move(value)});
    }
}

// The value of `name` among `parameters`; an error when it is given twice, since two
// readers could then disagree about which one counts.
result<std::optional<std::string>> unique_parameter(const std::vector<parameter>& parameters, std::string_view name,
                                                    std::string_view header_name) {
    std::optional<std::string> found;
    for (const auto& p : parameters) {
        if (p.name != name) continue;
        if (found) return invalid(std::string(header_name) + " gives the parameter '" + std::string(name) + "' twice");
        found = p.value;
    }
    return found;
}

result<part_header> parse_content_disposition(std::string_view value) {
    constexpr std::string_view header_name = "Content-Disposition";
    const auto type = trim(value.substr(0, value.find(';')));
    if (!equals_ignoring_case(type, "form-data")) {
        return invalid("a part's Content-Disposition is '" + printable(type) +
                       "'; every part of a multipart/form-data body must be 'form-data'");
    }
    auto parameters = parse_parameters(value.substr(std::min(value.size(), value.find(';'))), header_name);
    if (!parameters) return parameters.error();
    auto name = unique_parameter(*parameters, "name", header_name);
    if (!name) return name.error();
    if (!*name) return invalid("a part's Content-Disposition has no name parameter (form-data; name=\"...\")");
    if ((*name)->empty()) return invalid("a part's Content-Disposition has an empty name");
    auto filename = unique_parameter(*parameters, "filename", header_name);
    if (!filename) return filename.error();
    part_header header;
    header.name = std::move(**name);
    header.filename = std::move(*filename);
    return header;
}

}  // namespace

result<std::string> boundary_from_content_type(std::string_view content_type) {
    const auto media_type = trim(content_type.substr(0, content_type.find(';')));
    if (media_type.empty()) {
        return invalid("no Content-Type: send the upload as multipart/form-data "
                       "(twine upload, or curl -F content=@file.whl)");
    }
    if (!equals_ignoring_case(media_type, "multipart/form-data")) {
        return invalid("Content-Type is '" + printable(media_type) +
                       "', not multipart/form-data: send the upload as a form (twine upload, or curl -F "
                       "content=@file.whl), or PUT the raw file to /api/v1/files/");
    }
    auto parameters = parse_parameters(content_type.substr(std::min(content_type.size(), content_type.find(';'))),
                                       "Content-Type");
    if (!parameters) return parameters.error();
    auto boundary = unique_parameter(*parameters, "boundary", "Content-Type");
    if (!boundary) return boundary.error();
    if (!*boundary) return invalid("multipart/form-data without a boundary parameter");
    std::string& text = **boundary;
    if (text.empty()) return invalid("the multipart/form-data boundary is empty");
    if (text.size() > max_boundary_length) {
        return invalid("the multipart/form-data boundary is " + std::to_string(text.size()) +
                       " characters long; RFC 2046 allows at most 70");
    }
    const auto bad = std::find_if(text.begin(), text.end(), [](char c) { return !is_boundary_char(c); });
    if (bad != text.end()) {
        return invalid("the multipart/form-data boundary contains '" + printable(std::string_view(&*bad, 1)) +
                       "', which RFC 2046 does not allow in a boundary");
    }
    if (text.back() == ' ') return invalid("the multipart/form-data boundary ends with a space, which RFC 2046 forbids");
    return std::move(text);
}

result<part_header> parse_part_headers(std::string_view header_block) {
    std::optional<part_header> disposition;
    std::optional<std::string> content_type;
    std::optional<std::string> transfer_encoding;

    struct header_line {
        std::string_view name;
        std::string value;
    };
    std::vector<header_line> lines;
    for (;;) {
        const auto end = header_block.find("\r\n");
        if (end == std::string_view::npos) return invalid("a part's header block does not end with an empty line");
        const auto line = header_block.substr(0, end);
        header_block.remove_prefix(end + 2);
        if (line.empty()) break;
        if (is_blank(line.front())) {  // obsolete line folding: continues the previous value
            if (lines.empty()) return invalid("a part's header block starts with a folded line");
            lines.back().value += ' ';
            lines.back().value += trim(line);
            continue;
        }
        if (line.starts_with("--")) {
            return invalid("a part's headers run into a boundary line: the part has no empty line after its headers");
        }
        const auto colon = line.find(':');
        if (colon == std::string_view::npos) {
            return invalid("a part header line has no colon: '" + printable(line) + "'");
        }
        const auto name = line.substr(0, colon);
        if (name.empty() || std::any_of(name.begin(), name.end(), is_blank)) {
            return invalid("a part header has a malformed name: '" + printable(name) + "'");
        }
        lines.push_back({name, std::string(trim(line.substr(colon + 1)))});
    }

    if (!header_block.empty()) return invalid("a part's header block goes on after its empty line");

    for (auto& line : lines) {
        auto set_once = [&line](std::optional<std::string>& slot) -> result<void> {
            if (slot) return invalid("a part has two " + std::string(line.name) + " headers");
            slot = std::move(line.value);
            return {};
        };
        const auto name = line.name;
        if (equals_ignoring_case(name, "Content-Disposition")) {
            if (disposition) return invalid("a part has two Content-Disposition headers");
            auto parsed = parse_content_disposition(line.value);
            if (!parsed) return parsed.error();
            disposition = std::move(*parsed);
        } else if (equals_ignoring_case(name, "Content-Type")) {
            if (auto done = set_once(content_type); !done) return done.error();
        } else if (equals_ignoring_case(name, "Content-Transfer-Encoding")) {
            if (auto done = set_once(transfer_encoding); !done) return done.error();
        }
    }

    if (!disposition) return invalid("a part has no Content-Disposition header: each part needs form-data; name=\"...\"");
    if (transfer_encoding) {
        const auto encoding = to_lower(*transfer_encoding);
        if (encoding != "binary" && encoding != "8bit" && encoding != "7bit") {
            return invalid("part '" + printable(disposition->name) + "' uses Content-Transfer-Encoding '" +
                           printable(*transfer_encoding) + "'; send the bytes as they are (binary)");
        }
    }
    disposition->content_type = content_type.value_or(std::string());
    return std::move(*disposition);
}

multipart_parser::multipart_parser(std::string_view boundary, part_sink& sink, multipart_limits limits)
    : delimiter_("\r\n--" + std::string(boundary)),
      searcher_(delimiter_.cbegin(), delimiter_.cend()),
      sink_(sink),
      limits_(limits) {
    assert(!boundary.empty() && boundary.size() <= max_boundary_length);
    assert(boundary.find_first_of("\r\n") == std::string_view::npos);  // the delimiter's only CR is its first byte
}

result<void> multipart_parser::feed(std::span<const char> chunk) {
    if (failure_) return *failure_;
    std::string_view input(chunk.data(), chunk.size());
    while (!input.empty()) {
        auto consumed = step(input);
        if (!consumed) {
            failure_ = consumed.error();
            state_ = state::failed;
            return *failure_;
        }
        // Zero only when leaving a false boundary in the preamble, whose scan then consumes.
        assert(*consumed <= input.size());
        input.remove_prefix(*consumed);
    }
    return {};
}

result<void> multipart_parser::finish() {
    if (failure_) return *failure_;
    if (state_ == state::epilogue) return {};
    if (state_ == state::preamble) {
        failure_ = invalid("the body never reaches the boundary '--" + delimiter_.substr(4) +
                           "' named in its Content-Type (" +
                           preamble_near_miss_.value_or("empty, or not the body the Content-Type describes?") + ")");
    } else {
        failure_ = invalid("the multipart body ends before its closing boundary (truncated upload?)");
    }
    state_ = state::failed;
    return *failure_;
}

result<std::size_t> multipart_parser::step(std::string_view input) {
    switch (state_) {
        case state::preamble:
        case state::body:
            return scan_for_delimiter(input);
        case state::after_boundary:
        case state::closing_dash:
        case state::transport_padding:
        case state::boundary_line_end:
            return read_boundary_tail(input);
        case state::headers:
            return read_headers(input);
        case state::epilogue:
            return input.size();
        case state::failed:
            break;
    }
    assert(failure_);
    return *failure_;
}

result<void> multipart_parser::deliver(std::string_view bytes) {
    if (state_ != state::body || bytes.empty()) return {};  // the preamble is dropped
    return sink_.part_data(std::span<const char>(bytes.data(), bytes.size()));
}

result<std::size_t> multipart_parser::scan_for_delimiter(std::string_view input) {
    const std::string_view delimiter = delimiter_;
    std::size_t position = 0;
    if (matched_ > 0) {  // a delimiter may have begun in an earlier chunk
        while (position < input.size() && matched_ < delimiter.size() && input[position] == delimiter[matched_]) {
            ++position;
            ++matched_;
        }
        if (matched_ == delimiter.size()) return on_delimiter(position);
        if (position == input.size()) return position;
        // Not a delimiter: the held bytes were data. The delimiter holds no CR past its first
        // byte, so no other match can start inside them; the byte that broke the match is
        // scanned again below.
        if (auto sent = deliver(delimiter.substr(0, matched_)); !sent) return sent.error();
        matched_ = 0;
    }
    const auto rest = input.substr(position);
    const auto found = std::search(rest.begin(), rest.end(), searcher_);
    if (found != rest.end()) {
        const auto offset = static_cast<std::size_t>(found - rest.begin());
        if (auto sent = deliver(rest.substr(0, offset)); !sent) return sent.error();
        return on_delimiter(position + offset + delimiter.size());
    }
    // The tail may hold the delimiter's beginning, which can then only start at its last CR.
    std::size_t data_end = rest.size();
    const auto tail_start = rest.size() - std::min(rest.size(), delimiter.size() - 1);
    const auto cr = rest.substr(tail_start).rfind('\r');
    if (cr != std::string_view::npos && delimiter.starts_with(rest.substr(tail_start + cr))) {
        data_end = tail_start + cr;
        matched_ = rest.size() - data_end;
    }
    if (auto sent = deliver(rest.substr(0, data_end)); !sent) return sent.error();
    return input.size();
}

result<std::size_t> multipart_parser::on_delimiter(std::size_t consumed) {
    matched_ = 0;
    in_preamble_ = state_ == state::preamble;
    if (state_ == state::body) {
        if (auto ended = sink_.end_part(); !ended) return ended.error();
    }
    state_ = state::after_boundary;
    return consumed;
}

result<std::size_t> multipart_parser::read_boundary_tail(std::string_view input) {
    const char c = input.front();
    const std::string boundary_line = delimiter_.substr(2);
    std::optional<std::string> malformed;
    switch (state_) {
        case state::after_boundary:
            if (c == '-') {
                state_ = state::closing_dash;
            } else if (is_blank(c)) {
                state_ = state::transport_padding;
            } else if (c == '\r') {
                state_ = state::boundary_line_end;
            } else if (c == '\n') {
                malformed = "the boundary line '" + boundary_line + "' ends with a bare LF; multipart bodies need CRLF";
            } else {
                malformed = "the boundary '" + boundary_line + "' is followed by '" + printable(input.substr(0, 1)) +
                            "' instead of a line end: the boundary occurs inside a part, or the body is damaged";
            }
            break;
        case state::closing_dash:
            if (c == '-') {
                state_ = state::epilogue;
                if (auto ended = sink_.end_body(); !ended) return ended.error();
            } else {
                malformed = "the boundary line '" + boundary_line + "-' is malformed: expected '--' or CRLF";
            }
            break;
        case state::transport_padding:
            if (c == '\r') {
                state_ = state::boundary_line_end;
            } else if (!is_blank(c)) {
                malformed = "the boundary line '" + boundary_line + "' has text after it";
            }
            break;
        case state::boundary_line_end:
            if (c == '\n') {
                if (++parts_ > limits_.max_parts) return too_many_parts();
                header_block_.clear();
                state_ = state::headers;
            } else {
                malformed = "the boundary line '" + boundary_line + "' does not end with CRLF";
            }
            break;
        default:
            assert(false);
            return make_error(error_kind::internal, "multipart parser in an impossible state");
    }
    if (!malformed) return 1;
    if (!in_preamble_) return invalid(std::move(*malformed));
    // Before the first boundary line anything goes: scan on, this byte included, and keep
    // the near miss to explain a body that never gets going.
    if (!preamble_near_miss_) preamble_near_miss_ = std::move(malformed);
    state_ = state::preamble;
    return 0;
}

error multipart_parser::too_many_parts() const {
    return make_error(error_kind::too_large,
                      "the form has more than " + std::to_string(limits_.max_parts) +
                          " parts; an upload is one 'content' part and its metadata fields (twine sends about 30, "
                          "plus one per classifier and requirement)");
}

result<std::size_t> multipart_parser::read_headers(std::string_view input) {
    for (std::size_t i = 0; i < input.size(); ++i) {
        const char c = input[i];
        const bool after_cr = !header_block_.empty() && header_block_.back() == '\r';
        if (c == '\n' && !after_cr) {
            return invalid("a part header line ends with a bare LF; multipart bodies need CRLF line endings");
        }
        if (c != '\n' && after_cr) return invalid("a part header line holds a bare CR");
        if (header_block_.size() >= limits_.max_header_block_bytes) {
            return invalid("part header block too large (over " + std::to_string(limits_.max_header_block_bytes) +
                           " bytes)");
        }
        header_block_.push_back(c);
        const bool block_ends = c == '\n' && (header_block_.size() == 2 || header_block_.ends_with("\r\n\r\n"));
        if (!block_ends) continue;

        auto header = parse_part_headers(header_block_);
        if (!header) return header.error();
        header_block_.clear();
        if (auto begun = sink_.begin_part(*header); !begun) return begun.error();
        state_ = state::body;
        matched_ = 0;
        return i + 1;
    }
    return input.size();
}

// --- form_collector ---

form_collector::form_collector(content_writer write_content, form_limits limits)
    : write_content_(std::move(write_content)), limits_(std::move(limits)) {}

result<void> form_collector::begin_part(const part_header& header) {
    assert(current_ == destination::none);
    if (header.name == "content") {
        if (content_seen_) return invalid("two 'content' parts: upload one file (wheel or sdist) per request");
        if (!header.filename || header.filename->empty()) {
            return invalid("the 'content' part has no filename: send the wheel or sdist as -F content=@FILE");
        }
        content_seen_ = true;
        content_filename_ = *header.filename;
        content_type_ = header.content_type;
        current_ = destination::content;
        return {};
    }
    if (std::find(limits_.skipped_fields.begin(), limits_.skipped_fields.end(), header.name) !=
        limits_.skipped_fields.end()) {
        current_ = destination::skipped;
        return {};
    }
    field_bytes_ += header.name.size();
    if (field_bytes_ > limits_.max_field_bytes) {
        return make_error(error_kind::too_large, "the form fields besides 'content' exceed " +
                                                     std::to_string(limits_.max_field_bytes) + " bytes (at field '" +
                                                     printable(header.name) + "')");
    }
    fields_.push_back({header.name, std::string(), header.filename});
    current_ = destination::field;
    return {};
}

result<void> form_collector::part_data(std::span<const char> bytes) {
    switch (current_) {
        case destination::content:
            if (bytes.size() > limits_.max_content_bytes - content_size_) {
                return make_error(error_kind::too_large, "the file is larger than the upload limit of " +
                                                             std::to_string(limits_.max_content_bytes) + " bytes");
            }
            content_size_ += bytes.size();
            return write_content_(bytes);
        case destination::field:
            field_bytes_ += bytes.size();
            if (field_bytes_ > limits_.max_field_bytes) {
                return make_error(error_kind::too_large, "the form fields besides 'content' exceed " +
                                                             std::to_string(limits_.max_field_bytes) +
                                                             " bytes (at field '" + printable(fields_.back().name) +
                                                             "')");
            }
            fields_.back().value.append(bytes.data(), bytes.size());
            return {};
        case destination::skipped:
            return {};  // read and dropped: the wheel's METADATA holds it
        case destination::none:
            break;
    }
    assert(false);
    return make_error(error_kind::internal, "form data outside a part");
}

result<void> form_collector::end_part() {
    current_ = destination::none;
    return {};
}

result<void> form_collector::end_body() {
    if (!content_seen_) return invalid("no 'content' part: send the wheel or sdist as -F content=@FILE");
    return {};
}

std::optional<std::string_view> form_collector::first_value(std::string_view name) const {
    const auto found = std::find_if(fields_.begin(), fields_.end(), [&](const form_field& f) { return f.name == name; });
    if (found == fields_.end()) return std::nullopt;
    return std::string_view(found->value);
}

}  // namespace wheelhouse::upload
