#pragma once
// The one place a lib/ error becomes an HTTP answer.

#include <string>
#include <string_view>

#include <boost/json/object.hpp>

#include "wheelhouse/result.hpp"
#include "wheelhouse/transport/request_handler.hpp"

namespace wheelhouse::app {

// Scripts ask for JSON with `Accept: application/json`; everyone else gets plain text.
bool wants_json(const http::request_header<>& request);

// twine shows only the status line of a failed upload, so an error's reason phrase carries
// its message: printable ASCII, one line, bounded.
std::string reason_phrase(std::string_view message);

// `json` for clients that asked for it, `text` (a line for people and curl) for the rest;
// `reason`, when given, replaces the standard reason phrase. Thread safety: any thread.
transport::outgoing_response text_or_json_response(const http::request_header<>& request, http::status status,
                                                   std::string text, const boost::json::object& json,
                                                   http::fields extra = {}, std::string_view reason = {});

// The error's status (transport::status_for) with its message, as JSON {"error": …} when
// asked for and as text otherwise; a 401 says `WWW-Authenticate: Basic` so pip, twine and
// curl know to send credentials. Our own faults (internal) are logged and answered without
// their details, which may name paths on the server. Thread safety: any thread.
transport::outgoing_response error_response(const http::request_header<>& request, const error& failure,
                                            http::fields extra = {});

}  // namespace wheelhouse::app
