#pragma once
// The namespace aliases every transport and handler file uses.

#include <string_view>

#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

namespace wheelhouse {
namespace net = boost::asio;
namespace beast = boost::beast;
namespace http = boost::beast::http;
using tcp = boost::asio::ip::tcp;
using error_code = boost::system::error_code;

// A known field's value (the first, when sent twice), "" when absent: what fields[name] gives,
// found by one walk over the fields in arrival order comparing their enum. Beast's operator[]
// looks the name up in its set by case-insensitive string compares, about 100 instructions a
// lookup, on every request several times; a request has a handful of fields, and its header
// block is bounded (session_limits), so the walk costs less and stays linear in what was sent.
inline std::string_view field_value(const http::fields& fields, http::field name) {
    for (const auto& each : fields) {
        if (each.name() == name) return each.value();
    }
    return {};
}
}  // namespace wheelhouse
