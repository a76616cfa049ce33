#include "wheelhouse/app/page_response.hpp"

#include <array>
#include <span>

#include "wheelhouse/http/conditional.hpp"
#include "wheelhouse/transport/responses.hpp"

namespace wheelhouse::app {

transport::outgoing_response respond_with_page(const http::request_header<>& request, const rendered_page& page,
                                               std::string_view content_type, std::string_view cache_control,
                                               bool negotiated, http::fields extra, std::string_view warning) {
    const auto if_none_match = request[http::field::if_none_match];
    const bool current = !if_none_match.empty() && http_conditional::if_none_match_matches(if_none_match, page.etag);
    if (extra.begin() != extra.end()) {
        // Pages with headers of their own (the admin catalog's assets, not pip's path) go
        // through Beast's fields, which take any header name.
        extra.set(http::field::etag, page.etag);
        extra.set(http::field::cache_control, cache_control);
        if (negotiated) extra.set(http::field::vary, negotiated_vary);
        if (!warning.empty()) extra.set(http::field::warning, warning);
        if (current) {
            http::response<http::empty_body> response{http::status::not_modified, request.version()};
            response.set(http::field::server, transport::server_name);
            for (const auto& field : extra) response.set(field.name_string(), field.value());
            response.keep_alive(transport::wants_keep_alive(request));
            return transport::outgoing_response{http::message_generator(std::move(response)), 304, 0};
        }
        return transport::make_shared_response(request, http::status::ok, content_type, page.body, std::move(extra));
    }
    // Every page hit comes here, so its head is written straight, past Beast's fields and serializer.
    std::array<transport::header_field, 5> fields;
    std::size_t count = 0;
    if (!current) fields[count++] = {http::field::content_type, content_type};
    fields[count++] = {http::field::etag, page.etag};
    fields[count++] = {http::field::cache_control, cache_control};
    if (negotiated) fields[count++] = {http::field::vary, negotiated_vary};
    if (!warning.empty()) fields[count++] = {http::field::warning, warning};
    const std::span<const transport::header_field> used(fields.data(), count);
    if (current) return transport::make_prepared_response(request, http::status::not_modified, used, nullptr);
    return transport::make_prepared_response(request, http::status::ok, used, page.body);
}

transport::outgoing_response redirect_permanently(const http::request_header<>& request, std::string_view public_root,
                                                  std::string_view path) {
    std::string location(public_root);
    if (location.ends_with('/') && path.starts_with('/')) location.pop_back();
    location += path;
    const auto target = request.target();
    if (const auto question = target.find('?'); question != std::string_view::npos)
        location.append(target.substr(question));
    http::fields headers;
    headers.set(http::field::location, location);
    return transport::make_text_response(request, http::status::moved_permanently, "see " + location,
                                         std::move(headers));
}

}  // namespace wheelhouse::app
