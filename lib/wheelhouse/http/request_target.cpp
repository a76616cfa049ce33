#include "wheelhouse/http/request_target.hpp"

#include <array>

#include <boost/url/parse.hpp>
#include <boost/url/url_view.hpp>

#include "wheelhouse/text/quoted.hpp"
#include "wheelhouse/text/utf8.hpp"

namespace wheelhouse::http_target {
namespace {

error dot_segment(std::string_view segment) {
    return invalid("the path has a '" + std::string(segment) + "' segment; ask for the resource by its plain path");
}

result<void> check_segment(const std::string& segment) {
    if (segment == "." || segment == "..") return dot_segment(segment);
    for (char c : segment) {
        const auto byte = static_cast<unsigned char>(c);
        if (byte < 0x20 || byte == 0x7F)
            return invalid("the path holds a control character (such as %00); remove it");
        if (c == '/' || c == '\\') return invalid("the path holds an encoded '/' or '\\' inside a segment");
    }
    return {};
}

// A decoded query value goes into searches, JSON and log lines: no byte of it may end or
// forge a line there, nor make the JSON that echoes it invalid, whatever the route does with it.
result<void> check_query_value(std::string_view key, std::string_view value) {
    for (char c : value) {
        const auto byte = static_cast<unsigned char>(c);
        if (byte < 0x20 || byte == 0x7F) {
            return invalid("the query parameter " + text::quoted(key, 40) + " holds a control character (" +
                           text::describe_byte(c) + ", such as %00 or %0A); remove it");
        }
    }
    if (!text::is_valid_utf8(value)) {
        return invalid("the query parameter " + text::quoted(key, 40) + " is not UTF-8 (" + text::quoted(value, 40) +
                       "); percent-encode the UTF-8 bytes of its text");
    }
    return {};
}

// The targets pip and wrk send almost always: "/simple/<name>/" and "/files/<sha256>/<wheel>" in
// unreserved characters and the '+' and '!' of versions (which a path does not decode), without
// escapes, query, empty or dot segments. Split here, they decode to themselves and need no URL
// parser; anything else returns nullopt and takes the full path.
constexpr std::array<bool, 256> plain_bytes = [] {
    std::array<bool, 256> plain{};
    for (unsigned char c = 0; c < 128; ++c) {
        plain[c] = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '.' ||
                   c == '_' || c == '~' || c == '+' || c == '!' || c == '/';
    }
    return plain;
}();

std::optional<request_target> parse_plain(std::string_view target) {
    if (target.size() < 2 || target.front() != '/') return std::nullopt;
    bool plain = true;  // one pass without an early exit: every byte is looked at once, by table
    for (char c : target) plain &= plain_bytes[static_cast<unsigned char>(c)];
    if (!plain) return std::nullopt;
    request_target out;
    out.segments.reserve(4);
    std::size_t start = 1;
    while (true) {
        const auto slash = target.find('/', start);
        const auto segment = target.substr(start, slash == std::string_view::npos ? slash : slash - start);
        const bool last = slash == std::string_view::npos;
        // "//" (merged by parse) and dot segments (refused by it) take the slow path.
        if ((segment.empty() && !last) || segment == "." || segment == "..") return std::nullopt;
        out.segments.emplace_back(segment);
        if (last) return out;
        start = slash + 1;
    }
}

// "//" in the path means "/": micropip joins an index URL that ends in '/' with "/<project>/",
// and nginx (merge_slashes) answers such paths as if written once. The query is left alone.
std::string merge_slashes(std::string_view target) {
    const auto query = target.find('?');
    const auto path = target.substr(0, query);
    std::string out;
    out.reserve(target.size());
    for (char c : path) {
        if (c != '/' || !out.ends_with('/')) out.push_back(c);
    }
    if (query != std::string_view::npos) out.append(target.substr(query));
    return out;
}

}  // namespace

std::optional<std::string_view> request_target::query_value(std::string_view key) const {
    for (const auto& [name, value] : query) {
        if (name == key) return value;
    }
    return std::nullopt;
}

result<request_target> parse(std::string_view target) {
    if (auto plain = parse_plain(target)) return std::move(*plain);
    if (target.substr(0, target.find('?')).find("//") != std::string_view::npos) return parse(merge_slashes(target));
    // The URL parser hides a leading "/./" (its way to write a path whose first segment is empty).
    if (target.starts_with("/./")) return dot_segment(".");
    auto parsed = boost::urls::parse_origin_form(target);
    if (!parsed) return invalid("the request target is not a valid path: " + parsed.error().message());
    const boost::urls::url_view& url = *parsed;

    request_target out;
    const auto segments = url.segments();
    for (auto segment : segments) {  // percent-decoded
        std::string text(segment);
        if (auto checked = check_segment(text); !checked) return checked.error();
        out.segments.push_back(std::move(text));
    }
    if (url.has_query()) {
        for (auto param : url.params()) {
            if (auto checked = check_segment(param.key); !checked) return checked.error();
            if (auto checked = check_query_value(param.key, param.value); !checked) return checked.error();
            out.query.emplace_back(std::string(param.key), param.has_value ? std::string(param.value) : std::string());
        }
    }
    return out;
}

}  // namespace wheelhouse::http_target
