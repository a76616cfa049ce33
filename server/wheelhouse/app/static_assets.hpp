#pragma once
// The files of static/ (the admin web catalog), compiled into the binary by
// cmake/embed_static.cmake: one binary is the whole deploy, and the page always matches the API
// of the server that serves it.

#include <span>
#include <string_view>

namespace wheelhouse::app {

struct static_asset {
    std::string_view path;     // relative to static/: "index.html", "js/app.mjs"
    std::string_view content;  // the file's bytes
};

// Ordered by path. Thread safety: any thread (constant data).
std::span<const static_asset> built_in_static_assets() noexcept;

}  // namespace wheelhouse::app
