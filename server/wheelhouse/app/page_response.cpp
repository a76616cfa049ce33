#include "wheelhouse/app/page_response.hpp"

#include <array>
#include <span>

#include "wheelhouse/http/conditional.hpp"
#include "wheelhouse/transport/responses.hpp"

namespace wheelhouse::app {

transport::outgoing_response respond_with_page(const http::request_header<>& request, const rendered_page& page,
                                               std::string_view content_type, std::string_view cache_control,
                                               bool vary_accept) {
    // Every page hit comes here, so its head is written straight, past Beast's fields and serializer.
    std::array<transport::header_field, 4> fields;
    std::size_t count = 0;
    const auto if_none_match = request[http::field::if_none_match];
    const bool current = !if_none_match.empty() && http_target::if_none_match_matches(if_none_match, page.etag);
    if (!current) fields[count++] = {http::field::content_type, content_type};
    fields[count++] = {http::field::etag, page.etag};
    fields[count++] = {http::field::cache_control, cache_control};
    if (vary_accept) fields[count++] = {http::field::vary, "Accept"};
    const std::span<const transport::header_field> used(fields.data(), count);
    if (current) return transport::make_prepared_response(request, http::status::not_modified, used, nullptr);
    return transport::make_prepared_response(request, http::status::ok, used, page.body);
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
