#include "wheelhouse/app/route_label.hpp"

namespace wheelhouse::app {
namespace {

// By the first segment of the row's pattern: "/simple/{project...}" is under "simple".
metrics::route label_of(const route& row, bool method_fits, const http_target::request_target& target) {
    if (method_fits && row.body == body_kind::stream) return metrics::route::upload;
    const auto path = row.pattern.substr(1);
    const auto first = path.substr(0, path.find_first_of("/["));
    if (first == "simple") {
        return path.find('{') == std::string_view::npos ? metrics::route::simple_index : metrics::route::simple_project;
    }
    if (first == "variants") return metrics::route::variants;
    if (first == "files") {
        const bool metadata = !target.segments.empty() && target.segments.back().ends_with(".metadata");
        return metadata ? metrics::route::metadata : metrics::route::files;
    }
    if (first == "integrity") return metrics::route::metadata;  // PEP 740: about a file, as its METADATA is
    if (first == "legacy") return metrics::route::upload;
    if (first == "api") return metrics::route::api;
    if (first == "_" || first == ".well-known") return metrics::route::trusted_publishing;
    if (first == "healthz") return metrics::route::healthz;
    if (first == "metrics") return metrics::route::metrics;
    if (first.empty() || first == "static") return metrics::route::static_files;
    return metrics::route::other;
}

}  // namespace

metrics::route route_label(const router& routes, std::string_view method, std::string_view target) {
    const auto verb = http::string_to_verb(method);
    auto parsed = http_target::parse(target);
    if (verb == http::verb::unknown || !parsed) return metrics::route::other;
    const auto match = routes.match(verb, *parsed);
    if (match.found != nullptr) return label_of(*match.found, true, *parsed);
    if (match.same_path != nullptr) return label_of(*match.same_path, false, *parsed);
    return metrics::route::other;
}

}  // namespace wheelhouse::app
