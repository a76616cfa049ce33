#include "wheelhouse/app/error_response.hpp"

#include <spdlog/spdlog.h>

#include "wheelhouse/transport/responses.hpp"

namespace wheelhouse::app {

http::status status_for(error_kind kind) noexcept {
    switch (kind) {
        case error_kind::invalid: return http::status::bad_request;
        case error_kind::unauthorized: return http::status::unauthorized;
        case error_kind::forbidden: return http::status::forbidden;
        case error_kind::not_found: return http::status::not_found;
        case error_kind::conflict: return http::status::conflict;
        case error_kind::too_large: return http::status::payload_too_large;
        case error_kind::unavailable: return http::status::service_unavailable;
        case error_kind::upstream: return http::status::bad_gateway;
        case error_kind::internal: return http::status::internal_server_error;
    }
    return http::status::internal_server_error;
}

transport::outgoing_response error_response(const http::request_header<>& request, const error& failure) {
    if (failure.kind == error_kind::internal) {
        spdlog::error("{} {}: {}", request.method_string(), request.target(), failure.message);
        return transport::make_text_response(
            request, http::status::internal_server_error,
            "the index failed to answer this request; the administrator has the details in the log");
    }
    return transport::make_text_response(request, status_for(failure.kind), failure.message);
}

}  // namespace wheelhouse::app
