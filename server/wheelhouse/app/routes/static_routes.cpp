#include "wheelhouse/app/routes/static_routes.hpp"

#include "wheelhouse/app/page_response.hpp"
#include "wheelhouse/app/route_context.hpp"
#include "wheelhouse/crypto/hasher.hpp"
#include "wheelhouse/transport/responses.hpp"

namespace wheelhouse::app {
namespace {

constexpr std::string_view index_page = "index.html";

http::fields security_headers() {
    http::fields headers;
    headers.set("Content-Security-Policy", admin_content_security_policy);
    headers.set("X-Content-Type-Options", "nosniff");
    headers.set("Referrer-Policy", "no-referrer");
    headers.set("X-Frame-Options", "DENY");
    return headers;
}

}  // namespace

std::string_view content_type_for(std::string_view path) noexcept {
    const auto dot = path.rfind('.');
    const auto extension = dot == std::string_view::npos ? std::string_view{} : path.substr(dot + 1);
    if (extension == "html") return "text/html; charset=utf-8";
    if (extension == "css") return "text/css; charset=utf-8";
    if (extension == "js" || extension == "mjs") return "text/javascript; charset=utf-8";
    if (extension == "svg") return "image/svg+xml";
    if (extension == "json") return "application/json";
    if (extension == "png") return "image/png";
    if (extension == "ico") return "image/x-icon";
    if (extension == "txt") return "text/plain; charset=utf-8";
    return "application/octet-stream";
}

static_routes::static_routes(std::span<const static_asset> assets) {
    for (const auto& asset : assets) {
        entry item;
        item.body = std::make_shared<const std::string>(asset.content);
        // Half a SHA-256 is plenty to tell two versions of one file apart.
        item.etag = "\"" + crypto::sha256_hex(asset.content).substr(0, 32) + "\"";
        item.content_type = content_type_for(asset.path);
        entries_.emplace(std::string(asset.path), std::move(item));
    }
}

transport::outgoing_response static_routes::serve(const http::request_header<>& request,
                                                  std::span<const std::string> segments) const {
    std::string path = segments.empty() ? std::string(index_page) : std::string();
    for (std::size_t i = 0; i < segments.size(); ++i) {
        if (i > 0) path.push_back('/');
        path += segments[i];
    }
    const auto found = entries_.find(path);
    if (found == entries_.end()) {
        return transport::make_text_response(request, http::status::not_found,
                                             "no file static/" + path + " in the admin catalog; the catalog is at /");
    }
    const auto& item = found->second;
    return respond_with_page(request, rendered_page{item.body, item.etag}, item.content_type, "no-cache", false,
                             security_headers());
}

route_answer static_file(route_context& context, route_request& request) {
    return context.static_files.serve(request.header(), request.capture_rest("path"));
}

}  // namespace wheelhouse::app
