#include "wheelhouse/http/request_target.hpp"

#include <boost/url/parse.hpp>
#include <boost/url/url_view.hpp>

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

// The targets pip and wrk send almost always: "/simple/<name>/" in unreserved characters only,
// without escapes, query, empty or dot segments. Split here, they decode to themselves and need
// no URL parser; anything else returns nullopt and takes the full path.
std::optional<request_target> parse_plain(std::string_view target) {
    if (target.size() < 2 || target.front() != '/') return std::nullopt;
    for (char c : target) {
        const bool plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
                           c == '.' || c == '_' || c == '~' || c == '/';
        if (!plain) return std::nullopt;
    }
    request_target out;
    out.segments.reserve(4);
    std::size_t start = 1;
    while (true) {
        const auto slash = target.find('/', start);
        const auto segment = target.substr(start, slash == std::string_view::npos ? slash : slash - start);
        const bool last = slash == std::string_view::npos;
        // "//" (an empty segment inside the path) and dot segments are the URL parser's to judge.
        if ((segment.empty() && !last) || segment == "." || segment == "..") return std::nullopt;
        out.segments.emplace_back(segment);
        if (last) return out;
        start = slash + 1;
    }
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
            out.query.emplace_back(std::string(param.key), param.has_value ? std::string(param.value) : std::string());
        }
    }
    return out;
}

}  // namespace wheelhouse::http_target
