#pragma once
// What the optional plain-HTTP listener (--redirect-http) answers: every request is sent to the
// same path over HTTPS. GET and HEAD get 301; every other method 308, which keeps the method and
// body (RFC 9110 §15.4.9), so an upload is repeated over HTTPS, never silently dropped to a GET,
// and its body is not read here at all.

#include <atomic>

#include "wheelhouse/transport/request_handler.hpp"

namespace wheelhouse::transport {

class https_redirect final : public request_handler {
public:
    // The HTTPS listener's port, once it is bound. Thread safety: any thread.
    void point_at(unsigned short https_port) noexcept { https_port_ = https_port; }

    body_plan plan_body(const http::request_header<>& header) override;
    void handle(incoming_request request, responder respond) override;

private:
    outgoing_response redirect(const http::request_header<>& request) const;

    std::atomic<unsigned short> https_port_{443};
};

}  // namespace wheelhouse::transport
