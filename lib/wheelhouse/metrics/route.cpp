#include "wheelhouse/metrics/route.hpp"

namespace wheelhouse::metrics {
namespace {

constexpr std::array<std::string_view, route_count> names = {
    "simple_index", "simple_project", "variants", "files", "metadata", "upload",
    "api",          "static",         "healthz",  "metrics", "other",
};

// Walks a path's segments from the front; `path` is what is left.
struct segment_reader {
    std::string_view path;  // without the leading '/'

    std::string_view next() noexcept {
        const auto slash = path.find('/');
        const auto segment = path.substr(0, slash);
        path = slash == std::string_view::npos ? std::string_view{} : path.substr(slash + 1);
        return segment;
    }
};

}  // namespace

std::string_view to_string(route which) noexcept { return names[static_cast<std::size_t>(which)]; }

route classify_route(std::string_view method, std::string_view target) noexcept {
    if (target.empty() || target.front() != '/') return route::other;
    target = target.substr(0, target.find_first_of("?#"));
    segment_reader segments{target.substr(1)};
    const auto first = segments.next();
    const auto rest = segments.path;

    if (first == "simple") return rest.empty() ? route::simple_index : route::simple_project;
    if (first == "variants") return route::variants;
    if (first == "files") return target.ends_with(".metadata") ? route::metadata : route::files;
    if (first == "legacy") return route::upload;
    if (first == "api") {
        if (method == "PUT" && segments.next() == "v1" && segments.next() == "files") return route::upload;
        return route::api;
    }
    if (first == "healthz" && rest.empty()) return route::healthz;
    if (first == "metrics" && rest.empty()) return route::metrics;
    if ((first.empty() && rest.empty()) || first == "static") return route::static_files;
    // Top-level assets of the web catalog: /favicon.ico, /app.js, /index.html.
    if (rest.empty() && first.find('.') != std::string_view::npos) return route::static_files;
    return route::other;
}

}  // namespace wheelhouse::metrics
