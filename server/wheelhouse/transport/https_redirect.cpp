#include "wheelhouse/transport/https_redirect.hpp"

#include <algorithm>
#include <cctype>
#include <string>
#include <string_view>

#include "wheelhouse/transport/responses.hpp"

namespace wheelhouse::transport {
namespace {

bool is_get_or_head(const http::request_header<>& request) {
    return request.method() == http::verb::get || request.method() == http::verb::head;
}

// The Host field's host, without its port: a DNS name or IPv4 address, or a bracketed IPv6
// address. Empty when it is neither, so no Location carries what the client made up.
std::string_view host_of(std::string_view host_field) {
    if (host_field.starts_with('[')) {
        const auto close = host_field.find(']');
        if (close == std::string_view::npos) return {};
        const auto inside = host_field.substr(1, close - 1);
        const bool ip6 = !inside.empty() && std::all_of(inside.begin(), inside.end(), [](char c) {
            return std::isxdigit(static_cast<unsigned char>(c)) || c == ':' || c == '.';
        });
        return ip6 ? host_field.substr(0, close + 1) : std::string_view{};
    }
    const auto host = host_field.substr(0, host_field.find(':'));
    const bool name = !host.empty() && host.size() <= 253 && std::all_of(host.begin(), host.end(), [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '.';
    });
    return name ? host : std::string_view{};
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
    const auto host = host_of(request[http::field::host]);
    const auto target = request.target();
    if (host.empty() || !target.starts_with('/')) {
        return make_text_response(request, http::status::bad_request,
                                  "send a Host field naming this server and a path: this address only sends clients "
                                  "to the same path over https://");
    }
    const unsigned short port = https_port_;
    std::string location = "https://";
    location.append(host);
    if (port != 443) location += ":" + std::to_string(port);
    location.append(target);
    http::fields extra;
    extra.set(http::field::location, location);
    const auto status = is_get_or_head(request) ? http::status::moved_permanently : http::status::permanent_redirect;
    return make_text_response(request, status, "use " + location + ": this address speaks HTTPS only",
                              std::move(extra));
}

}  // namespace wheelhouse::transport
