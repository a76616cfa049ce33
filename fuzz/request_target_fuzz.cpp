// Request targets (http/request_target). Beside memory safety, for a target that parses:
// - the segments and query written back percent-encoded (every byte but letters and digits)
//   parse to the same segments and query (parse∘print), through the full URL parser;
// - the fast path for plain targets agrees with the full parser: the same target with one of its
//   letters or digits percent-encoded parses the same;
// - no segment or query key holds a control character or an encoded '/' or '\'.

#include <optional>
#include <string>

#include "fuzz_support.hpp"
#include "wheelhouse/http/request_target.hpp"

namespace {

using wheelhouse::http_target::request_target;

constexpr char hex[] = "0123456789ABCDEF";

// Where the first letter or digit that is not part of a percent-escape is.
std::optional<std::size_t> plain_character(std::string_view text) {
    for (std::size_t i = 0; i < text.size(); ++i) {
        if (text[i] == '%') {
            i += 2;
            continue;
        }
        const char c = text[i];
        if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')) return i;
    }
    return std::nullopt;
}

std::string percent_encoded(std::string_view text) {
    std::string out;
    for (char c : text) {
        const auto byte = static_cast<unsigned char>(c);
        if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')) {
            out += c;
        } else {
            out += '%';
            out += hex[byte >> 4];
            out += hex[byte & 0xF];
        }
    }
    return out;
}

std::string written(const request_target& target) {
    std::string out;
    for (const auto& segment : target.segments) out += "/" + percent_encoded(segment);
    if (out.empty()) out = "/";
    for (std::size_t i = 0; i < target.query.size(); ++i) {
        out += (i == 0 ? "?" : "&") + percent_encoded(target.query[i].first) + "=" + percent_encoded(target.query[i].second);
    }
    return out;
}

std::string describe(const request_target& target) {
    std::string out;
    for (const auto& segment : target.segments) out += "[" + segment + "]";
    for (const auto& [key, value] : target.query) out += " " + key + "=" + value;
    return out;
}

bool has_forbidden_byte(std::string_view text) {
    for (char c : text) {
        const auto byte = static_cast<unsigned char>(c);
        if (byte < 0x20 || byte == 0x7F || c == '/' || c == '\\') return true;
    }
    return false;
}

void check_same(std::string_view what, const request_target& a, std::string_view how, std::string_view text) {
    auto again = wheelhouse::http_target::parse(text);
    WHEELHOUSE_FUZZ_CHECK(again.has_value(), std::string(what) + " " + std::string(how) + " as " + std::string(text) +
                                                 " is refused: " + (again ? "" : again.error().message));
    WHEELHOUSE_FUZZ_CHECK(again->segments == a.segments && again->query == a.query,
                          std::string(what) + " is " + describe(a) + "; " + std::string(how) + " as " +
                              std::string(text) + " it is " + describe(*again));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const auto text = wheelhouse::fuzz::as_text(data, size);
    auto parsed = wheelhouse::http_target::parse(text);
    if (!parsed) {
        WHEELHOUSE_FUZZ_CHECK(!parsed.error().message.empty(), std::string(text));
        return 0;
    }
    for (const auto& segment : parsed->segments) {
        WHEELHOUSE_FUZZ_CHECK(!has_forbidden_byte(segment) && segment != "." && segment != "..", describe(*parsed));
    }
    for (const auto& [key, value] : parsed->query) WHEELHOUSE_FUZZ_CHECK(!has_forbidden_byte(key), describe(*parsed));

    // "/" alone is the one target whose segments do not say how it was written.
    if (!parsed->segments.empty()) check_same(text, *parsed, "written back", written(*parsed));
    if (auto letter = plain_character(text)) {
        const auto byte = static_cast<unsigned char>(text[*letter]);
        const std::string escaped = std::string(text.substr(0, *letter)) + "%" + hex[byte >> 4] + hex[byte & 0xF] +
                                    std::string(text.substr(*letter + 1));
        check_same(text, *parsed, "with one character percent-encoded", escaped);
    }
    return 0;
}
