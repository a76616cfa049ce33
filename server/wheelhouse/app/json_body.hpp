#pragma once
// Reading the small JSON objects the API's writes take, with refusals that show what to send.

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include <boost/json/object.hpp>

#include "wheelhouse/result.hpp"

namespace wheelhouse::app {

// The request body as a JSON object; an empty body is an empty object. `example` is shown in
// the refusal of anything else.
result<boost::json::object> body_object(const std::string& body, std::string_view example);

// A text field that may be absent or null; one line, at most `max_length` bytes.
result<std::optional<std::string>> optional_text(const boost::json::object& body, std::string_view key,
                                                 std::size_t max_length);

}  // namespace wheelhouse::app
