#pragma once
// GET / (the admin catalog's index.html) and GET /static/<path> (its scripts and styles), with
// the content type each needs, an ETag from the bytes, revalidation on every load (the names
// carry no hash, so a cached copy must be checked), and a Content-Security-Policy that allows
// scripts from this origin only: no inline script, no eval, nothing from elsewhere.

#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>

#include "wheelhouse/app/route.hpp"
#include "wheelhouse/app/static_assets.hpp"
#include "wheelhouse/transport/request_handler.hpp"

namespace wheelhouse::app {

inline constexpr std::string_view admin_content_security_policy =
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
    "base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

// By extension; "application/octet-stream" for what is not known.
std::string_view content_type_for(std::string_view path) noexcept;

class static_routes {
public:
    // Hashes every asset once. Thread safety: construct on one thread.
    explicit static_routes(std::span<const static_asset> assets);

    // The asset at `path`, the segments under static/; the admin page for none.
    // Thread safety: any I/O thread (reads only).
    transport::outgoing_response serve(const http::request_header<>& request, std::span<const std::string> path) const;

private:
    struct entry {
        std::shared_ptr<const std::string> body;
        std::string etag;
        std::string_view content_type;
    };
    std::unordered_map<std::string, entry> entries_;
};

struct route_context;
// The route of "/" and "/static/{path...}". Thread safety: any I/O thread.
route_answer static_file(route_context& context, route_request& request);

}  // namespace wheelhouse::app
