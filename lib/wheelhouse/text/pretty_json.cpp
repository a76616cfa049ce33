#include "wheelhouse/text/pretty_json.hpp"

#include <boost/json.hpp>

namespace wheelhouse::text {
namespace {

void write(std::string& out, const boost::json::value& value, std::size_t depth) {
    const auto newline = [&](std::size_t level) {
        out += '\n';
        out.append(2 * level, ' ');
    };
    if (const auto* object = value.if_object()) {
        if (object->empty()) {
            out += "{}";
            return;
        }
        out += '{';
        bool first = true;
        for (const auto& member : *object) {
            if (!first) out += ',';
            first = false;
            newline(depth + 1);
            out += boost::json::serialize(member.key());
            out += ": ";
            write(out, member.value(), depth + 1);
        }
        newline(depth);
        out += '}';
    } else if (const auto* array = value.if_array()) {
        if (array->empty()) {
            out += "[]";
            return;
        }
        out += '[';
        bool first = true;
        for (const auto& element : *array) {
            if (!first) out += ',';
            first = false;
            newline(depth + 1);
            write(out, element, depth + 1);
        }
        newline(depth);
        out += ']';
    } else {
        out += boost::json::serialize(value);
    }
}

}  // namespace

std::string pretty_json(const boost::json::value& value) {
    std::string out;
    write(out, value, 0);
    return out;
}

}  // namespace wheelhouse::text
