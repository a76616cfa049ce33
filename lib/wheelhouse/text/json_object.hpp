#pragma once
// A JSON object read from outside as strictly as a signature check needs it read: a key twice
// in one object is refused rather than resolved (boost::json keeps one of them, another
// reader may keep the other, and a token's "aud" must mean one thing to everyone). Read in one
// pass that builds the value as it checks; nesting is bounded (a deep document costs no stack)
// and strings must be UTF-8 (Boost.JSON's own check). Cost: linear in the text.

#include <cstddef>
#include <string_view>

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

#include "wheelhouse/result.hpp"

namespace wheelhouse::text {

struct json_object_limits {
    std::size_t max_depth = 32;  // objects and arrays open at once (boost::json's default)
};

// The object `text` holds. `invalid`, saying why, for text that is not JSON ("not valid JSON
// (…) at byte N"), JSON whose top level is not an object, a key repeated in any object at any
// depth ("the key 'aud' appears twice in one object"), or nesting deeper than the limit
// ("not valid JSON: nested deeper than 32 levels").
result<boost::json::object> parse_json_object(std::string_view text, const json_object_limits& limits = {});
// The same for a document whose top level may be any JSON value (an upload's list of attestations).
result<boost::json::value> parse_json_value(std::string_view text, const json_object_limits& limits = {});

}  // namespace wheelhouse::text
