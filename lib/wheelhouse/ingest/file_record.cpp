#include "wheelhouse/ingest/file_record.hpp"

#include <array>
#include <string_view>
#include <utility>

#include "wheelhouse/crypto/hasher.hpp"
#include "wheelhouse/pep825/variant_metadata.hpp"
#include "wheelhouse/variants/build_variant.hpp"

namespace wheelhouse::ingest {
namespace {

// The python, abi and platform tags as the filename writes them ("py2.py3"), the last three
// '-'-separated parts of a name pep427 already accepted, before any variant label.
std::array<std::string, 3> written_tags(const pep427::wheel_filename& wheel) {
    std::string_view stem = std::string_view(wheel.filename).substr(0, wheel.filename.size() - 4);  // ".whl"
    if (wheel.variant_label) stem.remove_suffix(wheel.variant_label->size() + 1);
    std::array<std::string, 3> tags;
    for (int i = 2; i >= 0; --i) {
        const auto dash = stem.rfind('-');
        tags[static_cast<std::size_t>(i)] = std::string(stem.substr(dash + 1));
        stem = stem.substr(0, dash);
    }
    return tags;
}

}  // namespace

catalog::file_record make_file_record(const pep427::wheel_filename& wheel, const validated_wheel& validated,
                                      std::string sha256, std::uint64_t size, std::optional<std::string> uploaded_by) {
    catalog::file_record file;
    file.project = wheel.normalized_name;
    file.filename = wheel.filename;
    file.version = wheel.version_text;
    file.normalized_version = wheel.version.to_string();
    file.local_label = wheel.version.local_string();
    auto tags = written_tags(wheel);
    file.python_tag = std::move(tags[0]);
    file.abi_tag = std::move(tags[1]);
    file.platform_tag = std::move(tags[2]);
    if (wheel.build) file.build_tag = wheel.build->text;
    file.variant = variants::decode(wheel);
    file.sha256 = std::move(sha256);
    file.size = size;
    if (auto requires_python = validated.metadata.requires_python()) file.requires_python = std::string(*requires_python);
    if (auto summary = validated.metadata.summary()) file.summary = std::string(*summary);
    file.mode = catalog::download_mode::local;
    file.metadata_sha256 = crypto::sha256_hex(validated.archive.metadata);
    file.metadata_size = validated.archive.metadata.size();
    file.uploaded_by = std::move(uploaded_by);
    if (wheel.variant_label && validated.variant) {
        file.variant_label = *wheel.variant_label;
        file.variant_properties = validated.variant->variants.at(*wheel.variant_label);
        file.variant_namespaces = pep825::namespaces_json(validated.variant->namespace_priorities);
    }
    return file;
}

catalog::file_record make_file_record(const pep625::sdist_filename& sdist, const validated_sdist& validated,
                                      std::string sha256, std::uint64_t size, std::optional<std::string> uploaded_by) {
    catalog::file_record file;
    file.type = catalog::package_type::sdist;
    file.project = sdist.normalized_name;
    file.filename = sdist.filename;
    file.version = sdist.version_text;
    file.normalized_version = sdist.version.to_string();
    file.local_label = sdist.version.local_string();
    file.sha256 = std::move(sha256);
    file.size = size;
    if (auto requires_python = validated.metadata.requires_python()) file.requires_python = std::string(*requires_python);
    if (auto summary = validated.metadata.summary()) file.summary = std::string(*summary);
    file.mode = catalog::download_mode::local;
    if (has_static_metadata(validated.metadata)) {
        file.metadata_sha256 = crypto::sha256_hex(validated.archive.pkg_info);
        file.metadata_size = validated.archive.pkg_info.size();
    }
    file.uploaded_by = std::move(uploaded_by);
    return file;
}

}  // namespace wheelhouse::ingest
