#pragma once
// Answering with a cached page: 200 with the body, or 304 when the client's copy is current.

#include <string_view>

#include "wheelhouse/app/page_cache.hpp"
#include "wheelhouse/transport/request_handler.hpp"

namespace wheelhouse::app {

// `negotiated` for pages chosen by content negotiation, which depends on Accept and, for pip
// before 23.2, on User-Agent (negotiated_vary); `extra` headers go on 200 and 304 alike, and
// so does `warning` (an upstream page served past its age: stale_warning).
transport::outgoing_response respond_with_page(const http::request_header<>& request, const rendered_page& page,
                                               std::string_view content_type, std::string_view cache_control,
                                               bool negotiated, http::fields extra = {},
                                               std::string_view warning = {});

// RFC 9111's Warning for a page served past its age, as caches have written it (RFC 7234 §5.5.1).
inline constexpr std::string_view stale_warning = "110 - \"Response is Stale\"";

// The Vary of a negotiated page.
inline constexpr std::string_view negotiated_vary = "Accept, User-Agent";

// 301 to `path` (absolute within the index: "/simple/x/") under `public_root` (app_settings'),
// keeping the query string of the request.
transport::outgoing_response redirect_permanently(const http::request_header<>& request, std::string_view public_root,
                                                  std::string_view path);

}  // namespace wheelhouse::app
