#pragma once
// JSON for people to read: the layout of Python's json.dumps(value, indent=2, ensure_ascii=False).

#include <string>

#include <boost/json/value.hpp>

namespace wheelhouse::text {

// Members and elements one a line, indented by two spaces a level; empty containers as "{}"
// and "[]"; strings and numbers exactly as boost::json::serialize writes them. No final newline.
std::string pretty_json(const boost::json::value& value);

}  // namespace wheelhouse::text
