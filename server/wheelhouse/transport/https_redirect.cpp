#include "wheelhouse/transport/https_redirect.hpp"

#include <arpa/inet.h>

#include <algorithm>
#include <cctype>
#include <iterator>
#include <string>
#include <string_view>

#include "wheelhouse/transport/responses.hpp"

namespace wheelhouse::transport {
namespace {

bool is_get_or_head(const http::request_header<>& request) {
    return request.method() == http::verb::get || request.method() == http::verb::head;
}

bool is_port(std::string_view text) {
    return !text.empty() && text.size() <= 5 &&
           std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// The Host field's host, without its port: a DNS name or IPv4 address, or a bracketed IPv6
// address, then nothing or ":PORT". Empty when it is anything else, so no Location carries what
// the client made up.
std::string_view host_of(std::string_view host_field) {
    std::string_view host = host_field;
    std::string_view rest;
    if (host_field.starts_with('[')) {
        const auto close = host_field.find(']');
        if (close == std::string_view::npos || close > 64) return {};
        host = host_field.substr(0, close + 1);
        rest = host_field.substr(close + 1);
        const std::string inside(host_field.substr(1, close - 1));
        in6_addr address{};
        if (inet_pton(AF_INET6, inside.c_str(), &address) != 1) return {};
    } else {
        const auto colon = host_field.find(':');
        host = host_field.substr(0, colon);
        rest = colon == std::string_view::npos ? std::string_view{} : host_field.substr(colon);
        const bool name = !host.empty() && host.size() <= 253 && std::all_of(host.begin(), host.end(), [](char c) {
            return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '.';
        });
        if (!name) return {};
    }
    if (!rest.empty() && !(rest.front() == ':' && is_port(rest.substr(1)))) return {};
    return host;
}

}  // namespace

body_plan https_redirect::plan_body(const http::request_header<>& header) {
    if (is_get_or_head(header)) return {};  // answered in handle(), the connection kept
    // The body stays unread, so the connection ends with the answer, and says so.
    auto closing = header;
    closing.set(http::field::connection, "close");
    body_plan plan;
    plan.how = body_plan::kind::reject;
    plan.rejection = redirect(closing);
    return plan;
}

void https_redirect::handle(incoming_request request, responder respond) { respond(redirect(request.header)); }

outgoing_response https_redirect::redirect(const http::request_header<>& request) const {
    // RFC 9112 §3.2: a request with more than one Host field is refused.
    const auto hosts = request.equal_range(http::field::host);
    const bool one_host = hosts.first != hosts.second && std::next(hosts.first) == hosts.second;
    const auto host = one_host ? host_of(field_value(request, http::field::host)) : std::string_view{};
    const auto target = request.target();
    if ((host.empty() && origin_.empty()) || !one_host || !target.starts_with('/')) {
        return make_text_response(request, http::status::bad_request,
                                  "send a Host field naming this server and a path: this address only sends clients "
                                  "to the same path over https://");
    }
    std::string location = origin_;
    if (location.empty()) {
        const unsigned short port = https_port_;
        location = "https://" + std::string(host);
        if (port != 443) location += ":" + std::to_string(port);
    }
    location.append(target);
    http::fields extra;
    extra.set(http::field::location, location);
    const auto status = is_get_or_head(request) ? http::status::moved_permanently : http::status::permanent_redirect;
    return make_text_response(request, status, "use " + location + ": this address speaks HTTPS only",
                              std::move(extra));
}

}  // namespace wheelhouse::transport
