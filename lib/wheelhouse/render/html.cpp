#include "wheelhouse/render/html.hpp"

#include "wheelhouse/text/hex.hpp"

namespace wheelhouse::render {

void append_html_escaped(std::string& out, std::string_view text) {
    for (char c : text) {
        switch (c) {
            case '&': out += "&amp;"; break;
            case '<': out += "&lt;"; break;
            case '>': out += "&gt;"; break;
            case '"': out += "&quot;"; break;
            case '\'': out += "&#39;"; break;
            default: out.push_back(c);
        }
    }
}

std::string html_escape(std::string_view text) {
    std::string out;
    out.reserve(text.size() + text.size() / 8);
    append_html_escaped(out, text);
    return out;
}

void append_percent_encoded_segment(std::string& out, std::string_view segment) {
    for (char c : segment) {
        const auto byte = static_cast<unsigned char>(c);
        const bool unreserved = (byte >= 'a' && byte <= 'z') || (byte >= 'A' && byte <= 'Z') ||
                                (byte >= '0' && byte <= '9') || byte == '-' || byte == '.' || byte == '_' ||
                                byte == '~';
        if (unreserved) {
            out.push_back(c);
        } else {
            out.push_back('%');
            text::append_hex(out, byte, text::hex_case::upper);
        }
    }
}

}  // namespace wheelhouse::render
