#include "wheelhouse/text/json_object.hpp"

#include <optional>
#include <set>
#include <string>
#include <vector>

#include <boost/json.hpp>
#include <boost/json/basic_parser_impl.hpp>

#include "wheelhouse/text/quoted.hpp"

namespace wheelhouse::text {
namespace {

namespace json = boost::json;

// A SAX pass that keeps the keys of each open object and stops at the first one seen twice.
class duplicate_key_finder {
public:
    static constexpr std::size_t max_object_size = std::size_t(-1);
    static constexpr std::size_t max_array_size = std::size_t(-1);
    static constexpr std::size_t max_key_size = std::size_t(-1);
    static constexpr std::size_t max_string_size = std::size_t(-1);

    std::optional<std::string> repeated;

    bool on_document_begin(boost::system::error_code&) { return true; }
    bool on_document_end(boost::system::error_code&) { return true; }
    bool on_object_begin(boost::system::error_code&) {
        open_.emplace_back();
        return true;
    }
    bool on_object_end(std::size_t, boost::system::error_code&) {
        open_.pop_back();
        return true;
    }
    bool on_array_begin(boost::system::error_code&) { return true; }
    bool on_array_end(std::size_t, boost::system::error_code&) { return true; }
    bool on_key_part(json::string_view part, std::size_t, boost::system::error_code&) {
        key_.append(part.data(), part.size());
        return true;
    }
    bool on_key(json::string_view part, std::size_t, boost::system::error_code& ec) {
        key_.append(part.data(), part.size());
        const bool fresh = open_.back().insert(key_).second;
        if (!fresh) {
            repeated = key_;
            ec = json::error::syntax;  // stop here; `repeated` says why
        }
        key_.clear();
        return fresh;
    }
    bool on_string_part(json::string_view, std::size_t, boost::system::error_code&) { return true; }
    bool on_string(json::string_view, std::size_t, boost::system::error_code&) { return true; }
    bool on_number_part(json::string_view, boost::system::error_code&) { return true; }
    bool on_int64(std::int64_t, json::string_view, boost::system::error_code&) { return true; }
    bool on_uint64(std::uint64_t, json::string_view, boost::system::error_code&) { return true; }
    bool on_double(double, json::string_view, boost::system::error_code&) { return true; }
    bool on_bool(bool, boost::system::error_code&) { return true; }
    bool on_null(boost::system::error_code&) { return true; }
    bool on_comment_part(json::string_view, boost::system::error_code&) { return true; }
    bool on_comment(json::string_view, boost::system::error_code&) { return true; }

private:
    std::vector<std::set<std::string>> open_;
    std::string key_;
};

}  // namespace

result<json::object> parse_json_object(std::string_view text) {
    json::basic_parser<duplicate_key_finder> scan{json::parse_options{}};
    boost::system::error_code failure;
    scan.write_some(false, text.data(), text.size(), failure);
    if (scan.handler().repeated) return invalid("the key " + text::quoted(*scan.handler().repeated) + " appears twice in one object");
    if (failure) return invalid("not valid JSON (" + failure.message() + ")");
    auto value = json::parse(json::string_view(text.data(), text.size()), failure);
    if (failure) return invalid("not valid JSON (" + failure.message() + ")");
    if (!value.is_object()) return invalid("the top level is not a JSON object");
    return std::move(value.as_object());
}

}  // namespace wheelhouse::text
