#include "wheelhouse/app/answers.hpp"

#include <boost/json.hpp>
#include <spdlog/spdlog.h>

#include "wheelhouse/transport/responses.hpp"

namespace wheelhouse::app {

bool wants_json(const http::request_header<>& request) {
    return request[http::field::accept].find("application/json") != std::string_view::npos;
}

std::string reason_phrase(std::string_view message) {
    std::string reason;
    for (char c : message.substr(0, 300)) reason.push_back(c >= 0x20 && c < 0x7F ? c : ' ');
    return reason;
}

transport::outgoing_response json_response(const http::request_header<>& request, http::status status,
                                           std::string body, http::fields extra) {
    extra.set(http::field::cache_control, "no-store");
    extra.set("X-Content-Type-Options", "nosniff");
    body.push_back('\n');
    return transport::make_shared_response(request, status, "application/json",
                                           std::make_shared<const std::string>(std::move(body)), std::move(extra));
}

transport::outgoing_response error_response(const http::request_header<>& request, const error& failure,
                                            audience answers, http::fields extra) {
    std::string_view message = failure.message;
    if (failure.kind == error_kind::internal) {
        spdlog::error("{} {}: {}", request.method_string(), request.target(), failure.message);
        message = "the index failed to answer this request; the administrator has the details in the log";
    }
    const auto status = transport::status_for(failure.kind);
    const bool api = answers == audience::json_api;
    if (failure.kind == error_kind::unauthorized) {
        extra.set(http::field::www_authenticate, api ? "Bearer realm=\"wheelhouse\"" : "Basic realm=\"wheelhouse\"");
    }
    if (api) return json_response(request, status, boost::json::serialize(boost::json::object{{"error", message}}), std::move(extra));
    std::string text = std::to_string(static_cast<unsigned>(status)) + " " +
                       std::string(http::obsolete_reason(status)) + ": " + std::string(message);
    return text_or_json_response(request, status, std::move(text), {{"error", message}}, std::move(extra), message);
}

transport::outgoing_response method_not_allowed(const http::request_header<>& request, method_set allowed,
                                                audience answers) {
    const auto allow = allow_header(allowed);
    http::fields headers;
    headers.set(http::field::allow, allow);
    // Not through error_response: its reason phrase would replace "Method Not Allowed".
    const std::string message = std::string(request.method_string()) + " is not allowed here; use " + allow;
    if (answers == audience::json_api) {
        return json_response(request, http::status::method_not_allowed,
                             boost::json::serialize(boost::json::object{{"error", message}}), std::move(headers));
    }
    return transport::make_text_response(request, http::status::method_not_allowed, message, std::move(headers));
}

transport::outgoing_response text_or_json_response(const http::request_header<>& request, http::status status,
                                                   std::string text, const boost::json::object& json,
                                                   http::fields extra, std::string_view reason) {
    http::response<http::string_body> response{status, request.version()};
    response.set(http::field::server, "wheelhouse");
    if (!reason.empty()) response.reason(reason_phrase(reason));
    for (const auto& field : extra) response.set(field.name_string(), field.value());
    if (wants_json(request)) {
        response.set(http::field::content_type, "application/json");
        response.body() = boost::json::serialize(json) + "\n";
    } else {
        response.set(http::field::content_type, "text/plain; charset=utf-8");
        response.body() = std::move(text) + "\n";
    }
    response.keep_alive(transport::wants_keep_alive(request));
    response.prepare_payload();
    const unsigned code = response.result_int();
    if (request.method() == http::verb::head) {  // the headers GET would send, Content-Length included
        response.body().clear();
        return transport::outgoing_response{http::message_generator(std::move(response)), code, 0};
    }
    const std::uint64_t bytes = response.body().size();
    return transport::outgoing_response{http::message_generator(std::move(response)), code, bytes};
}

}  // namespace wheelhouse::app
