#include "wheelhouse/ingest/wheel_validation.hpp"

#include <string>

#include "wheelhouse/error_text.hpp"
#include "wheelhouse/metadata/field_validation.hpp"
#include "wheelhouse/pep440/version.hpp"
#include "wheelhouse/pep503/name.hpp"

namespace wheelhouse::ingest {

result<void> check_dist_info_name(std::string_view dist_info, const pep427::wheel_filename& wheel) {
    std::string_view stem = dist_info;
    stem.remove_suffix(std::string_view(".dist-info").size());
    const auto name = stem.substr(0, stem.find('-'));
    if (pep503::normalize(name) != wheel.normalized_name) {
        return invalid("rename the file or rebuild the wheel: its .dist-info directory names another project",
                       "the wheel's " + std::string(dist_info) + " directory belongs to project " +
                           pep503::normalize(name) + ", but the filename is for " + wheel.normalized_name);
    }
    return {};
}

result<void> check_metadata_matches(const metadata::core_metadata& metadata, const pep427::wheel_filename& wheel) {
    const auto name = pep503::normalize(metadata.name());
    if (name != wheel.normalized_name) {
        return invalid("rename the file or rebuild the wheel: METADATA's Name is another project than the filename's",
                       "METADATA says Name: " + std::string(metadata.name()) + ", but the filename is for project " +
                           wheel.normalized_name);
    }
    auto version = pep440::parse(metadata.version());
    if (!version) {
        return invalid("rebuild the wheel with a PEP 440 version in METADATA",
                       "METADATA says Version: " + std::string(metadata.version()) + ", which is not a PEP 440 version: " +
                           describe(version.error()));
    }
    if (*version != wheel.version) {
        std::string detail = "METADATA says Version: " + std::string(metadata.version()) + ", but the filename says " +
                             wheel.version_text + "; pip discards such a wheel (\"inconsistent version\")";
        if (version->local.empty() && !wheel.version.local.empty() &&
            version->public_string() == wheel.version.public_string()) {
            return invalid("rebuild with +" + wheel.version.local_string() +
                               " in the version, or rename the file to drop it: the local label is in the filename only",
                           std::move(detail));
        }
        return invalid("rebuild the wheel or rename the file: METADATA's Version differs from the filename's",
                       std::move(detail));
    }
    return {};
}

result<std::optional<pep825::variant_metadata>> check_variant_metadata(const wheel_archive& archive,
                                                                       const pep427::wheel_filename& wheel) {
    const std::string file = archive.dist_info + "/variant.json";
    // Without a label the wheel is the one every installer takes when no variant fits; properties
    // it carries would say otherwise to a variant-aware one. One of the two is a mistake: refuse.
    if (!wheel.variant_label) {
        if (!archive.variant_json_size) return std::optional<pep825::variant_metadata>();
        return invalid("rename the wheel with the variant label its variant.json lists (…-LABEL.whl), or rebuild it "
                       "without variant.json: a wheel whose name has no variant label is not a PEP 825 variant",
                       file + " is in a wheel whose filename names no variant");
    }
    const auto& label = *wheel.variant_label;
    if (!archive.variant_json_size) {
        return invalid("rebuild the wheel with its variant.json: the filename names variant '" + label + "'",
                       file + " is missing; PEP 825 variant wheels carry it, mapping the label to its properties");
    }
    auto parsed = [&]() -> result<pep825::variant_metadata> {
        if (auto fits = pep825::check_size(*archive.variant_json_size); !fits) return fits.error();
        return pep825::parse_variant_metadata(archive.variant_json.value_or(""));
    }();
    if (!parsed) return invalid("fix variant.json and rebuild the wheel: " + parsed.error().message, file);
    std::string labels;
    for (const auto& [listed, properties] : parsed->variants) labels += (labels.empty() ? "" : ", ") + listed;
    if (parsed->variants.size() != 1 || !parsed->variants.contains(label)) {
        return invalid("rebuild the wheel: its variant.json must list exactly the filename's label '" + label + "'",
                       file + " lists " + (labels.empty() ? std::string("no label") : labels));
    }
    return std::optional(std::move(parsed).value());
}

namespace {

result<validated_wheel> check_against_filename(wheel_archive archive, const pep427::wheel_filename& wheel) {
    if (auto named = check_dist_info_name(archive.dist_info, wheel); !named) return named.error();
    auto parsed = metadata::parse_core_metadata(archive.metadata);
    if (!parsed) return invalid(archive.dist_info + "/METADATA: " + parsed.error().message);
    if (auto matches = check_metadata_matches(*parsed, wheel); !matches) return matches.error();
    if (auto fields = metadata::validate_fields(*parsed); !fields) {
        return invalid(archive.dist_info + "/METADATA: " + fields.error().message);
    }
    auto variant = check_variant_metadata(archive, wheel);
    if (!variant) return variant.error();
    return validated_wheel{std::move(archive), std::move(parsed).value(), std::move(variant).value()};
}

}  // namespace

result<validated_wheel> validate_wheel(const std::filesystem::path& path, const pep427::wheel_filename& wheel,
                                       const archive_limits& limits) {
    auto archive = read_wheel_archive(path, limits);
    if (!archive) return archive.error();
    return check_against_filename(std::move(archive).value(), wheel);
}

result<validated_wheel> validate_remote_wheel(range_cache& file, const pep427::wheel_filename& wheel,
                                              const archive_limits& limits) {
    auto archive = read_remote_wheel_archive(file, limits);
    if (!archive) return archive.error();
    return check_against_filename(std::move(archive).value(), wheel);
}

}  // namespace wheelhouse::ingest
