#include "wheelhouse/distribution/file_name.hpp"

#include "wheelhouse/error_text.hpp"
#include "wheelhouse/pep503/name.hpp"
#include "wheelhouse/text/file_name.hpp"

namespace wheelhouse::distribution {
namespace {

constexpr std::string_view metadata_suffix = ".metadata";
constexpr std::string_view release_variants_suffix = "-variants.json";
constexpr std::string_view release_variants_kind = "variants.json";

// "{name}-{version}-variants.json": the name and version as a wheel filename writes them, so
// neither holds a '-'.
result<release_variants_name> parse_release_variants_name(std::string_view filename) {
    if (auto bad = text::check_file_name_bytes(release_variants_kind, filename)) return *bad;
    const auto fail = [&](std::string_view reason) {
        return text::refuse_file_name(release_variants_kind, filename, reason);
    };
    auto stem = filename.substr(0, filename.size() - release_variants_suffix.size());
    const auto dash = stem.find('-');
    if (dash == std::string_view::npos || stem.find('-', dash + 1) != std::string_view::npos)
        return fail("write it {name}-{version}-variants.json, with '_' for each '-' of the name");
    const auto name = stem.substr(0, dash);
    if (!pep503::is_valid_project_name(name)) return fail("its name part is not a project name");
    auto version = pep440::parse(stem.substr(dash + 1));
    if (!version) return fail("its version part is not a PEP 440 version");
    return release_variants_name{std::string(filename), pep503::normalize(name), std::string(stem.substr(dash + 1)),
                                 std::move(version).value()};
}

}  // namespace

result<archive_name> parse_archive_name(std::string_view filename) {
    if (pep625::looks_like_sdist(filename)) {
        auto sdist = pep625::parse_sdist_filename(filename);
        if (!sdist) return sdist.error();
        return archive_name{std::move(sdist).value()};
    }
    // Anything else is judged as a wheel, whose parser says a name must end in ".whl" or ".tar.gz".
    auto wheel = pep427::parse_wheel_filename(filename);
    if (!wheel) return wheel.error();
    return archive_name{std::move(wheel).value()};
}

const std::string& project_of(const archive_name& name) noexcept {
    return std::visit([](const auto& parsed) -> const std::string& { return parsed.normalized_name; }, name);
}

std::optional<row_request> row_requested(std::string_view filename) noexcept {
    const bool metadata = filename.ends_with(metadata_suffix);
    if (metadata) filename.remove_suffix(metadata_suffix.size());
    if (filename.ends_with(release_variants_suffix)) return std::nullopt;
    return row_request{filename, metadata};
}

result<file_name> parse_file_name(std::string_view filename) {
    if (filename.ends_with(release_variants_suffix)) {
        auto variants = parse_release_variants_name(filename);
        if (!variants) return variants.error();
        return file_name{file_kind::release_variants, std::move(variants).value()};
    }
    const bool metadata = filename.ends_with(metadata_suffix);
    if (metadata) filename.remove_suffix(metadata_suffix.size());
    auto archive = parse_archive_name(filename);
    if (!archive) return archive.error();
    if (auto* wheel = std::get_if<pep427::wheel_filename>(&*archive)) {
        return file_name{metadata ? file_kind::wheel_metadata : file_kind::wheel, std::move(*wheel)};
    }
    return file_name{metadata ? file_kind::sdist_metadata : file_kind::sdist,
                     std::get<pep625::sdist_filename>(std::move(*archive))};
}

const std::string& file_name::project() const noexcept {
    return std::visit([](const auto& name) -> const std::string& { return name.normalized_name; }, parsed);
}

const std::string& file_name::row_filename() const noexcept {
    return std::visit([](const auto& name) -> const std::string& { return name.filename; }, parsed);
}

std::string_view describe(file_kind kind) noexcept {
    switch (kind) {
        case file_kind::wheel: return "wheel";
        case file_kind::sdist: return "sdist";
        case file_kind::wheel_metadata: return "wheel metadata";
        case file_kind::sdist_metadata: return "sdist metadata";
        case file_kind::release_variants: return "release variants.json";
    }
    return "file";
}

}  // namespace wheelhouse::distribution
