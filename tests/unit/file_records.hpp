#pragma once
// Catalog rows as ingest makes them from a filename alone: for tests of what reads the catalog.

#include <initializer_list>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "wheelhouse/catalog/records.hpp"
#include "wheelhouse/pep427/wheel_filename.hpp"
#include "wheelhouse/pep625/sdist_filename.hpp"
#include "wheelhouse/variants/build_variant.hpp"

namespace wheelhouse::testing {

inline catalog::file_record file_record_for(const std::string& filename) {
    if (filename.ends_with(".tar.gz")) {  // an sdist: no tags, no variant
        const auto sdist = pep625::parse_sdist_filename(filename);
        REQUIRE(sdist);
        catalog::file_record file;
        file.type = catalog::package_type::sdist;
        file.project = sdist->normalized_name;
        file.filename = filename;
        file.version = sdist->version_text;
        file.normalized_version = sdist->version.to_string();
        file.local_label = sdist->version.local_string();
        file.sha256 = std::string(64, 'a');
        return file;
    }
    const auto wheel = pep427::parse_wheel_filename(filename);
    REQUIRE(wheel);
    catalog::file_record file;
    file.project = wheel->normalized_name;
    file.filename = filename;
    file.version = wheel->version_text;
    file.normalized_version = wheel->version.to_string();
    file.local_label = wheel->version.local_string();
    // The tags as written: the last three '-'-separated parts before any variant label.
    std::string stem = filename.substr(0, filename.size() - 4);
    if (wheel->variant_label) stem.resize(stem.size() - wheel->variant_label->size() - 1);
    std::string tags[3];
    for (int i = 2; i >= 0; --i) {
        const auto dash = stem.rfind('-');
        tags[i] = stem.substr(dash + 1);
        stem.resize(dash);
    }
    file.python_tag = tags[0];
    file.abi_tag = tags[1];
    file.platform_tag = tags[2];
    if (wheel->build) file.build_tag = wheel->build->text;
    file.variant = variants::decode(*wheel);
    file.sha256 = std::string(64, 'a');
    return file;
}

inline std::vector<catalog::file_record> file_records_for(std::initializer_list<const char*> filenames) {
    std::vector<catalog::file_record> out;
    for (const char* name : filenames) out.push_back(file_record_for(name));
    return out;
}

}  // namespace wheelhouse::testing
