#include "wheelhouse/metrics/route.hpp"

#include <array>

namespace wheelhouse::metrics {
namespace {

constexpr std::array<std::string_view, route_count> names = {
    "simple_index", "simple_project", "variants", "files", "metadata", "upload",
    "api",          "trusted_publishing", "static", "healthz", "metrics", "other",
};

}  // namespace

std::string_view to_string(route which) noexcept { return names[static_cast<std::size_t>(which)]; }

}  // namespace wheelhouse::metrics
