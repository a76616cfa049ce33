#pragma once
// How the app answers: the one vocabulary every route uses for JSON, for errors (the one place
// a lib/ error becomes an HTTP answer, and internal errors are logged and masked) and for 405.

#include <string>
#include <string_view>

#include <boost/json/object.hpp>

#include "wheelhouse/app/route.hpp"
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

// A JSON document of the API (`body` is serialised JSON): never kept by a cache, never sniffed
// as another type. Thread safety: any thread.
transport::outgoing_response json_response(const http::request_header<>& request, http::status status,
                                           std::string body, http::fields extra = {});

// The error's status (transport::status_for) with its message, in the form its audience reads:
// package tools get text (JSON when asked) with the message as reason phrase and a Basic
// challenge on 401; the JSON API gets {"error": …} and a Bearer challenge (see audience).
// Our own faults (internal) are logged here, once, and answered without their details, which
// may name paths on the server. An unavailable one (503: a full disk, a full queue) carries
// Retry-After, default_retry_after unless `extra` has one. Thread safety: any thread.
inline constexpr std::string_view default_retry_after = "5";
transport::outgoing_response error_response(const http::request_header<>& request, const error& failure,
                                            audience answers = audience::package_tools, http::fields extra = {});

// A refusal of the trusted-publishing exchange in the shape its clients read: PyPI's
// {"message": "Token request failed", "errors": [{"code", "description"}]} (the PyPA action prints
// each error; uv prints the body), with RFC 9457's "title", "status" and "detail" beside them, as
// PEP 807 asks, as application/problem+json. error_response answers the trusted_publishing
// audience through it, with the code of publishing_code_of. Thread safety: any thread.
transport::outgoing_response publishing_refusal(const http::request_header<>& request, http::status status,
                                                std::string_view code, std::string_view description,
                                                http::fields extra = {});
// "invalid-payload", "unavailable", "internal-error", "not-found": an error's code there.
std::string_view publishing_code_of(error_kind kind) noexcept;

// 503 with Retry-After, for a request whose lane (`runs_on`) had no room in its queue: says which
// work keeps the index busy. Thread safety: any thread.
transport::outgoing_response busy_response(const http::request_header<>& request, lane runs_on, audience answers);

// 405 with `Allow: <allowed>`, the methods the route table has for this path.
transport::outgoing_response method_not_allowed(const http::request_header<>& request, method_set allowed,
                                                audience answers);

}  // namespace wheelhouse::app
