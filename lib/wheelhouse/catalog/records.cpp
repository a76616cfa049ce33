#include "wheelhouse/catalog/records.hpp"

namespace wheelhouse::catalog {

std::string_view to_string(project_status status) noexcept {
    switch (status) {
        case project_status::active: return "active";
        case project_status::archived: return "archived";
        case project_status::quarantined: return "quarantined";
        case project_status::deprecated: return "deprecated";
    }
    return "active";
}

std::optional<project_status> parse_project_status(std::string_view text) noexcept {
    for (auto status : {project_status::active, project_status::archived, project_status::quarantined,
                        project_status::deprecated}) {
        if (to_string(status) == text) return status;
    }
    return std::nullopt;
}

std::string_view to_string(download_mode mode) noexcept {
    switch (mode) {
        case download_mode::local: return "local";
        case download_mode::redirect: return "redirect";
        case download_mode::proxy: return "proxy";
        case download_mode::cache: return "cache";
    }
    return "local";
}

std::optional<download_mode> parse_download_mode(std::string_view text) noexcept {
    for (auto mode : {download_mode::local, download_mode::redirect, download_mode::proxy, download_mode::cache}) {
        if (to_string(mode) == text) return mode;
    }
    return std::nullopt;
}

std::string_view to_string(package_type type) noexcept {
    return type == package_type::sdist ? "sdist" : "bdist_wheel";
}

std::optional<package_type> parse_package_type(std::string_view text) noexcept {
    for (auto type : {package_type::wheel, package_type::sdist}) {
        if (to_string(type) == text) return type;
    }
    return std::nullopt;
}

}  // namespace wheelhouse::catalog
