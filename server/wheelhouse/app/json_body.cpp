#include "wheelhouse/app/json_body.hpp"

#include <boost/json.hpp>

namespace wheelhouse::app {

result<boost::json::object> body_object(const std::string& body, std::string_view example) {
    if (body.empty()) return boost::json::object{};
    boost::system::error_code ec;
    auto parsed = boost::json::parse(body, ec);
    if (ec) return invalid("the body is not JSON (" + ec.message() + "); send an object such as " + std::string(example));
    if (!parsed.is_object()) return invalid("the body must be a JSON object such as " + std::string(example));
    return std::move(parsed.as_object());
}

result<std::optional<std::string>> optional_text(const boost::json::object& body, std::string_view key,
                                                 std::size_t max_length) {
    const auto* value = body.if_contains(key);
    if (value == nullptr || value->is_null()) return std::optional<std::string>();
    if (!value->is_string()) return invalid("'" + std::string(key) + "' must be a string");
    std::string text(value->as_string());
    if (text.size() > max_length) {
        return invalid("'" + std::string(key) + "' is " + std::to_string(text.size()) + " bytes; at most " +
                       std::to_string(max_length) + " are kept");
    }
    for (const char c : text) {
        if (static_cast<unsigned char>(c) < 0x20 || c == 0x7F)
            return invalid("'" + std::string(key) + "' must be one line without control characters");
    }
    return std::optional(std::move(text));
}

}  // namespace wheelhouse::app
