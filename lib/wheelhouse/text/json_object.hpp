#pragma once
// A JSON object read from outside as strictly as a signature check needs it read: a key twice
// in one object is refused rather than resolved (boost::json keeps one of them, another
// reader may keep the other, and a token's "aud" must mean one thing to everyone).

#include <string_view>

#include <boost/json/object.hpp>

#include "wheelhouse/result.hpp"

namespace wheelhouse::text {

// The object `text` holds. `invalid`, saying why, for text that is not JSON, JSON whose top
// level is not an object, a key repeated in any object at any depth (named), or nesting deeper
// than boost::json's default limit (32).
result<boost::json::object> parse_json_object(std::string_view text);

}  // namespace wheelhouse::text
