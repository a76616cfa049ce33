#pragma once
// The one place a lib/ error becomes an HTTP answer.

#include "wheelhouse/result.hpp"
#include "wheelhouse/transport/request_handler.hpp"

namespace wheelhouse::app {

http::status status_for(error_kind kind) noexcept;

// The error's status with its message for the client; our own faults (internal) are logged
// and answered without their details, which may name paths on the server.
// Thread safety: any thread.
transport::outgoing_response error_response(const http::request_header<>& request, const error& failure);

}  // namespace wheelhouse::app
