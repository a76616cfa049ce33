#include "wheelhouse/app/route.hpp"

#include <array>

#include "wheelhouse/app/answers.hpp"

namespace wheelhouse::app {

method_set bit_of(http::verb method) noexcept {
    switch (method) {
        case http::verb::get: return GET;
        case http::verb::head: return HEAD;
        case http::verb::post: return POST;
        case http::verb::put: return PUT;
        case http::verb::delete_: return DELETE;
        default: return 0;
    }
}

std::string allow_header(method_set methods) {
    static constexpr std::array<std::pair<method_set, std::string_view>, 5> names{
        {{GET, "GET"}, {HEAD, "HEAD"}, {POST, "POST"}, {PUT, "PUT"}, {DELETE, "DELETE"}}};
    std::string allow;
    for (const auto& [bit, name] : names) {
        if ((methods & bit) == 0) continue;
        if (!allow.empty()) allow += ", ";
        allow += name;
    }
    return allow;
}

std::string_view route_request::capture(std::string_view name) const noexcept {
    for (const auto& [captured, index] : captures) {
        if (captured == name && index < target.segments.size()) return target.segments[index];
    }
    return {};
}

std::span<const std::string> route_request::capture_rest(std::string_view name) const noexcept {
    for (const auto& [captured, index] : captures) {
        if (captured == name && index < target.segments.size()) return std::span(target.segments).subspan(index);
    }
    return {};
}

transport::outgoing_response route_request::refuse(const error& failure, http::fields extra) const {
    return error_response(header(), failure, matched->answers, std::move(extra));
}

transport::outgoing_response route_request::busy(lane runs_on) const {
    return busy_response(header(), runs_on, matched->answers);
}

}  // namespace wheelhouse::app
