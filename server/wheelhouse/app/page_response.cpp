#include "wheelhouse/app/page_response.hpp"

#include "wheelhouse/http/conditional.hpp"
#include "wheelhouse/transport/responses.hpp"

namespace wheelhouse::app {

transport::outgoing_response respond_with_page(const http::request_header<>& request, const rendered_page& page,
                                               std::string_view content_type, std::string_view cache_control,
                                               bool vary_accept) {
    http::fields headers;
    headers.set(http::field::etag, page.etag);
    headers.set(http::field::cache_control, cache_control);
    if (vary_accept) headers.set(http::field::vary, "Accept");

    const auto if_none_match = request[http::field::if_none_match];
    if (!if_none_match.empty() && http_target::if_none_match_matches(if_none_match, page.etag)) {
        http::response<http::empty_body> response{http::status::not_modified, request.version()};
        response.set(http::field::server, "wheelhouse");
        for (const auto& field : headers) response.set(field.name_string(), field.value());
        response.keep_alive(transport::wants_keep_alive(request));
        return transport::outgoing_response{http::message_generator(std::move(response)), 304, 0};
    }
    return transport::make_shared_response(request, http::status::ok, content_type, page.body, std::move(headers));
}

transport::outgoing_response redirect_permanently(const http::request_header<>& request, std::string location) {
    const auto target = request.target();
    if (const auto question = target.find('?'); question != std::string_view::npos)
        location.append(target.substr(question));
    http::fields headers;
    headers.set(http::field::location, location);
    return transport::make_text_response(request, http::status::moved_permanently, "see " + location,
                                         std::move(headers));
}

}  // namespace wheelhouse::app
