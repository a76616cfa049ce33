#include "wheelhouse/app/page_response.hpp"

#include <array>
#include <ctime>
#include <span>

#include "wheelhouse/http/conditional.hpp"
#include "wheelhouse/transport/responses.hpp"

namespace wheelhouse::app {

namespace {

// A page's Last-Modified, and whether the client's copy is current by the validators it sent.
// A page rendered at 10:00:00.2 may be rendered again, changed, at 10:00:00.7: a date in seconds
// cannot tell those two apart. So the date a response carries is the second after the render
// (10:00:01), no copy older than the render can claim it, and If-Modified-Since is current only
// at or after it; until that second has begun (Last-Modified may not be later than the response),
// the render's own second, which no If-Modified-Since then finds current.
struct page_validators {
    std::string_view last_modified;  // empty: none
    bool current = false;
};

page_validators validate(const http::request_header<>& request, const rendered_page& page) {
    page_validators out;
    const auto next_second = page.rendered_ms / 1000 + 1;
    if (page.rendered_ms > 0) {
        const bool begun = static_cast<std::int64_t>(std::time(nullptr)) >= next_second;
        const auto& date = begun ? page.next_second : page.rendered_second;
        out.last_modified = std::string_view(date.data(), date.size());
    }
    if (const auto if_none_match = field_value(request, http::field::if_none_match); !if_none_match.empty()) {
        out.current = http_conditional::if_none_match_matches(if_none_match, page.etag);
    } else if (page.rendered_ms > 0) {
        out.current = http_conditional::unmodified_since(field_value(request, http::field::if_modified_since), next_second);
    }
    return out;
}

}  // namespace

transport::outgoing_response respond_with_page(const http::request_header<>& request, const rendered_page& page,
                                               std::string_view content_type, std::string_view cache_control,
                                               bool negotiated, http::fields extra, std::string_view warning) {
    const auto [last_modified, current] = validate(request, page);
    if (extra.begin() != extra.end()) {
        // Pages with headers of their own (the admin catalog's assets, not pip's path) go
        // through Beast's fields, which take any header name.
        extra.set(http::field::etag, page.etag);
        if (!last_modified.empty()) extra.set(http::field::last_modified, last_modified);
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
    std::array<transport::header_field, 6> fields;
    std::size_t count = 0;
    if (!current) fields[count++] = {http::field::content_type, content_type};
    fields[count++] = {http::field::etag, page.etag};
    if (!last_modified.empty()) fields[count++] = {http::field::last_modified, last_modified};
    fields[count++] = {http::field::cache_control, cache_control};
    if (negotiated) fields[count++] = {http::field::vary, negotiated_vary};
    if (!warning.empty()) fields[count++] = {http::field::warning, warning};
    const std::span<const transport::header_field> used(fields.data(), count);
    if (current) return transport::make_prepared_response(request, http::status::not_modified, used, nullptr);
    return transport::make_prepared_response(request, http::status::ok, used, page.body, page.body_file);
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
