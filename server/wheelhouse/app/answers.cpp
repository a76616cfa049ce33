#include "wheelhouse/app/answers.hpp"

#include <chrono>

#include <boost/json.hpp>
#include <spdlog/spdlog.h>

#include "wheelhouse/error_text.hpp"
#include "wheelhouse/text/utf8.hpp"
#include "wheelhouse/transport/responses.hpp"

namespace wheelhouse::app {

bool wants_json(const http::request_header<>& request) {
    return field_value(request, http::field::accept).find("application/json") != std::string_view::npos;
}

// The reason is the message's first line; one that still exceeds reason_budget (a reason not yet
// written short) is cut between words rather than mid-word, and the body has it whole.
std::string reason_phrase(std::string_view message) {
    std::string reason;
    for (char c : message.substr(0, message.find('\n'))) reason.push_back(c >= 0x20 && c < 0x7F ? c : ' ');
    if (reason.size() <= reason_budget) return reason;
    // Cut at the last space that leaves room for the ellipsis, never inside a word.
    constexpr std::string_view ellipsis = "...";
    const auto space = reason.rfind(' ', reason_budget - ellipsis.size());
    reason.resize(space == std::string::npos || space == 0 ? reason_budget - ellipsis.size() : space);
    while (!reason.empty() && (reason.back() == ' ' || reason.back() == ',' || reason.back() == ';' ||
                               reason.back() == ':')) {
        reason.pop_back();
    }
    return reason.append(ellipsis);
}

namespace {

// A JSON document of `media_type`: never kept by a cache, never sniffed as another type.
transport::outgoing_response json_document(const http::request_header<>& request, http::status status,
                                           std::string_view media_type, std::string body, http::fields extra) {
    extra.set(http::field::cache_control, "no-store");
    extra.set("X-Content-Type-Options", "nosniff");
    body.push_back('\n');
    return transport::make_shared_response(request, status, media_type,
                                           std::make_shared<const std::string>(std::move(body)), std::move(extra));
}

}  // namespace

transport::outgoing_response json_response(const http::request_header<>& request, http::status status,
                                           std::string body, http::fields extra) {
    return json_document(request, status, "application/json", std::move(body), std::move(extra));
}

transport::outgoing_response error_response(const http::request_header<>& request, const error& failure,
                                            audience answers, http::fields extra) {
    // The message's first line is the reason phrase, the rest the detail (wheelhouse/error_text.hpp).
    // It may echo what the client sent (a name in the path): as UTF-8 always, so the JSON is JSON.
    const std::string valid = text::replace_invalid_utf8(failure.message);
    const error shown{failure.kind, valid};
    std::string_view message = reason_of(shown);
    std::string_view detail = detail_of(shown);
    if (failure.kind == error_kind::internal) {
        spdlog::error("{} {}: {}", request.method_string(), request.target(), describe(failure));
        message = "the index failed to answer this request; the administrator has the details in the log";
        detail = {};
    }
    const auto status = transport::status_for(failure.kind);
    const bool api = answers == audience::json_api;
    if (failure.kind == error_kind::unauthorized) {
        extra.set(http::field::www_authenticate, api ? "Bearer realm=\"wheelhouse\"" : "Basic realm=\"wheelhouse\"");
    }
    // Every 503 says when to come back; a busy lane gives its own time (busy_response).
    if (failure.kind == error_kind::unavailable && extra.find(http::field::retry_after) == extra.end()) {
        extra.set(http::field::retry_after, default_retry_after);
    }
    if (answers == audience::trusted_publishing) {
        std::string description(message);
        if (!detail.empty()) description.append(" (").append(detail).append(")");
        return publishing_refusal(request, status, publishing_code_of(failure.kind), description, std::move(extra));
    }
    boost::json::object json{{"error", message}};
    if (!detail.empty()) json["detail"] = detail;
    if (api) return json_response(request, status, boost::json::serialize(json), std::move(extra));
    // The text body: the reason again, whole, then the detail on its own line.
    std::string text = std::to_string(static_cast<unsigned>(status)) + " " +
                       std::string(http::obsolete_reason(status)) + ": " + std::string(message);
    if (!detail.empty()) text.append("\n").append(detail);
    return text_or_json_response(request, status, std::move(text), json, std::move(extra), message);
}

std::string_view publishing_code_of(error_kind kind) noexcept {
    switch (kind) {
        case error_kind::unavailable: return "unavailable";
        case error_kind::internal: return "internal-error";
        case error_kind::not_found: return "not-found";
        default: return "invalid-payload";
    }
}

transport::outgoing_response publishing_refusal(const http::request_header<>& request, http::status status,
                                                std::string_view code, std::string_view description,
                                                http::fields extra) {
    boost::json::object body{{"message", "Token request failed"},
                             {"errors", boost::json::array{boost::json::object{{"code", code}, {"description", description}}}},
                             // RFC 9457's members, which PEP 807 asks for, beside PyPI's.
                             {"title", reason_phrase(description)},
                             {"status", static_cast<unsigned>(status)},
                             {"detail", description}};
    return json_document(request, status, "application/problem+json", boost::json::serialize(body), std::move(extra));
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
    response.set(http::field::server, transport::server_name);
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

namespace {

// What a 503 says and asks for, by the pool that had no room.
struct busy_answer {
    std::string_view message;
    std::chrono::seconds retry_after;
};

busy_answer busy_answer_of(lane runs_on) {
    switch (runs_on) {
        case lane::ingest: return {"the index is busy ingesting other uploads; retry shortly", std::chrono::seconds(5)};
        case lane::write_pool:
            return {"the index is busy with other changes (uploads, curation); retry shortly",
                    std::chrono::seconds(2)};
        case lane::outbound:
            return {"the index is busy with work waiting on other hosts (registrations, upstream indexes, trusted publishers' "
                    "signing keys); retry shortly",
                    std::chrono::seconds(5)};
        case lane::read_pool:
        case lane::io_thread: break;
    }
    return {"the index is busy answering other reads; retry shortly", std::chrono::seconds(2)};
}

}  // namespace

transport::outgoing_response busy_response(const http::request_header<>& request, lane runs_on, audience answers) {
    const auto [message, retry_after] = busy_answer_of(runs_on);
    http::fields retry;
    retry.set(http::field::retry_after, std::to_string(retry_after.count()));
    return error_response(request, make_error(error_kind::unavailable, std::string(message)), answers,
                          std::move(retry));
}

}  // namespace wheelhouse::app
