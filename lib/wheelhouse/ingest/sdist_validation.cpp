#include "wheelhouse/ingest/sdist_validation.hpp"

#include <string>

#include "wheelhouse/error_text.hpp"
#include "wheelhouse/metadata/field_validation.hpp"
#include "wheelhouse/pep440/version.hpp"
#include "wheelhouse/pep503/name.hpp"
#include "wheelhouse/text/quoted.hpp"

namespace wheelhouse::ingest {
namespace {

// The top-level directory is {name}-{version} of the same project and version (build tools
// have spelt the name part differently from the filename: setuptools and poetry before PEP 625).
result<void> check_root(std::string_view root, const pep625::sdist_filename& sdist) {
    const auto dash = root.rfind('-');
    const auto version = dash == std::string_view::npos ? pep440::parse("") : pep440::parse(root.substr(dash + 1));
    if (dash == std::string_view::npos || pep503::normalize(root.substr(0, dash)) != sdist.normalized_name ||
        !version || *version != sdist.version) {
        return invalid("rebuild the sdist or rename it: its top-level directory names another project or version",
                       "the archive's directory is " + text::quoted(std::string(root) + "/") + ", the filename says " +
                           sdist.stem() + "/");
    }
    return {};
}

result<void> check_pkg_info_matches(const metadata::core_metadata& metadata, const pep625::sdist_filename& sdist) {
    const auto says = "PKG-INFO says Name: " + std::string(metadata.name()) + ", Version: " +
                      std::string(metadata.version()) + "; the filename says " + sdist.normalized_name + " " +
                      sdist.version_text;
    if (pep503::normalize(metadata.name()) != sdist.normalized_name) {
        return invalid("rename the file or rebuild the sdist: PKG-INFO's Name is another project than the filename's", says);
    }
    auto version = pep440::parse(metadata.version());
    if (!version || *version != sdist.version) {
        return invalid("rename the file or rebuild the sdist: PKG-INFO's Version differs from the filename's", says);
    }
    return {};
}

}  // namespace

bool has_static_metadata(const metadata::core_metadata& metadata) {
    const auto version = pep440::parse(metadata.metadata_version());
    const auto first_static = pep440::parse("2.2");
    return version && first_static && pep440::compare(*version, *first_static) >= 0 && metadata.get_all("Dynamic").empty();
}

result<validated_sdist> validate_sdist(const std::filesystem::path& path, const pep625::sdist_filename& sdist,
                                       const archive_limits& limits, const sdist_member_visitor& on_member) {
    auto archive = read_sdist_archive(path, limits, {}, on_member);
    if (!archive) return archive.error();
    if (auto root = check_root(archive->root, sdist); !root) return root.error();
    auto parsed = metadata::parse_core_metadata(archive->pkg_info);
    if (!parsed) return invalid(archive->root + "/PKG-INFO: " + parsed.error().message);
    if (auto matches = check_pkg_info_matches(*parsed, sdist); !matches) return matches.error();
    if (auto fields = metadata::validate_fields(*parsed); !fields) {
        return invalid(archive->root + "/PKG-INFO: " + fields.error().message);
    }
    return validated_sdist{std::move(archive).value(), std::move(parsed).value()};
}

}  // namespace wheelhouse::ingest
