#include "wheelhouse/http/request_target.hpp"

#include <boost/url/parse.hpp>
#include <boost/url/url_view.hpp>

namespace wheelhouse::http_target {
namespace {

result<void> check_segment(const std::string& segment) {
    if (segment == "." || segment == "..")
        return invalid("the path has a '" + segment + "' segment; ask for the resource by its plain path");
    for (char c : segment) {
        const auto byte = static_cast<unsigned char>(c);
        if (byte < 0x20 || byte == 0x7F)
            return invalid("the path holds a control character (such as %00); remove it");
        if (c == '/' || c == '\\') return invalid("the path holds an encoded '/' or '\\' inside a segment");
    }
    return {};
}

}  // namespace

std::optional<std::string_view> request_target::query_value(std::string_view key) const {
    for (const auto& [name, value] : query) {
        if (name == key) return value;
    }
    return std::nullopt;
}

result<request_target> parse(std::string_view target) {
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
