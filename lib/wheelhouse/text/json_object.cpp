#include "wheelhouse/text/json_object.hpp"

#include <optional>
#include <string>
#include <unordered_set>
#include <vector>

#include <boost/json/basic_parser_impl.hpp>
#include <boost/json/value_stack.hpp>

#include "wheelhouse/text/quoted.hpp"

namespace wheelhouse::text {
namespace {

namespace json = boost::json;
using boost::system::error_code;

// Boost.JSON's own value builder (json::parser's handler), plus the keys of every open object,
// stopping at the first key one object holds twice.
struct checking_builder {
    static constexpr std::size_t max_object_size = json::object::max_size();
    static constexpr std::size_t max_array_size = json::array::max_size();
    static constexpr std::size_t max_key_size = json::string::max_size();
    static constexpr std::size_t max_string_size = json::string::max_size();

    json::value_stack stack;
    std::vector<std::unordered_set<std::string>> open_keys;  // one set per open object
    std::size_t depth = 0;                                    // objects open now
    std::string key;                                          // the key being read, in parts
    std::optional<std::string> repeated;

    bool on_document_begin(error_code&) { return true; }
    bool on_document_end(error_code&) { return true; }
    bool on_object_begin(error_code&) {
        if (open_keys.size() <= depth) open_keys.emplace_back();
        open_keys[depth++].clear();  // sets are kept for reuse: no allocation per small object
        return true;
    }
    bool on_object_end(std::size_t size, error_code&) {
        --depth;
        stack.push_object(size);
        return true;
    }
    bool on_array_begin(error_code&) { return true; }
    bool on_array_end(std::size_t size, error_code&) {
        stack.push_array(size);
        return true;
    }
    bool on_key_part(json::string_view part, std::size_t, error_code&) {
        key.append(part.data(), part.size());
        stack.push_chars(part);
        return true;
    }
    bool on_key(json::string_view part, std::size_t, error_code& ec) {
        key.append(part.data(), part.size());
        if (!open_keys[depth - 1].insert(key).second) {
            repeated = std::move(key);
            ec = json::error::syntax;  // stops the parse; `repeated` says why
            return false;
        }
        key.clear();
        stack.push_key(part);
        return true;
    }
    bool on_string_part(json::string_view part, std::size_t, error_code&) {
        stack.push_chars(part);
        return true;
    }
    bool on_string(json::string_view part, std::size_t, error_code&) {
        stack.push_string(part);
        return true;
    }
    bool on_number_part(json::string_view, error_code&) { return true; }
    bool on_int64(std::int64_t value, json::string_view, error_code&) {
        stack.push_int64(value);
        return true;
    }
    bool on_uint64(std::uint64_t value, json::string_view, error_code&) {
        stack.push_uint64(value);
        return true;
    }
    bool on_double(double value, json::string_view, error_code&) {
        stack.push_double(value);
        return true;
    }
    bool on_bool(bool value, error_code&) {
        stack.push_bool(value);
        return true;
    }
    bool on_null(error_code&) {
        stack.push_null();
        return true;
    }
    bool on_comment_part(json::string_view, error_code&) { return true; }
    bool on_comment(json::string_view, error_code&) { return true; }
};

}  // namespace

result<json::value> parse_json_value(std::string_view text, const json_object_limits& limits) {
    json::parse_options options;
    options.max_depth = limits.max_depth;
    json::basic_parser<checking_builder> parser(options);
    parser.handler().stack.reset();
    error_code failure;
    const auto used = parser.write_some(false, text.data(), text.size(), failure);
    if (auto& repeated = parser.handler().repeated)
        return invalid("the key " + quoted(*repeated) + " appears twice in one object");
    if (failure == json::error::too_deep)
        return invalid("not valid JSON: nested deeper than " + std::to_string(limits.max_depth) + " levels");
    if (failure) return invalid("not valid JSON (" + failure.message() + ") at byte " + std::to_string(used));
    if (used < text.size()) return invalid("not valid JSON (more after the document) at byte " + std::to_string(used));
    return parser.handler().stack.release();
}

result<json::object> parse_json_object(std::string_view text, const json_object_limits& limits) {
    auto value = parse_json_value(text, limits);
    if (!value) return value.error();
    if (!value->is_object()) return invalid("the top level is not a JSON object");
    return std::move(value->as_object());
}

}  // namespace wheelhouse::text
