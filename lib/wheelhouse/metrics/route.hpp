#pragma once
// Which route a request went to, as a small fixed set: a metric label must never be the raw
// path, or every project name and filename would become a time series of its own. Which
// request goes under which label the server's route table says, one label a row (app/route.hpp).

#include <cstddef>
#include <string_view>

namespace wheelhouse::metrics {

enum class route : std::size_t {
    simple_index,    // /simple/
    simple_project,  // /simple/<project>/
    variants,        // /variants/<selector>/simple/...
    files,           // /files/<sha256>/<filename>
    metadata,        // /files/<sha256>/<filename>.metadata
    upload,          // POST /legacy/, PUT /api/v1/files/<filename>
    api,             // the rest of /api/
    trusted_publishing,  // /_/oidc/… and /.well-known/pytp: CI trading identity tokens
    static_files,    // the web catalog: /, /static/...
    healthz,
    metrics,
    other,           // anything else: no route's path, malformed targets
};
inline constexpr std::size_t route_count = static_cast<std::size_t>(route::other) + 1;

// The label value: "simple_index", ..., "static", ..., "other".
std::string_view to_string(route which) noexcept;

}  // namespace wheelhouse::metrics
