#pragma once
// Everything that makes a file an sdist this index will serve under its filename: the archive
// checks of sdist_archive, plus the agreement of its top-level directory and PKG-INFO with what
// the PEP 625 filename says, and PKG-INFO's fields validated as a wheel's METADATA is.

#include <filesystem>

#include "wheelhouse/ingest/sdist_archive.hpp"
#include "wheelhouse/metadata/core_metadata.hpp"
#include "wheelhouse/pep625/sdist_filename.hpp"
#include "wheelhouse/result.hpp"

namespace wheelhouse::ingest {

struct validated_sdist {
    sdist_archive archive;
    metadata::core_metadata metadata;  // archive.pkg_info, parsed
};

// read_sdist_archive, then the checks above; `on_member` sees each member as it is checked.
result<validated_sdist> validate_sdist(const std::filesystem::path& path, const pep625::sdist_filename& sdist,
                                       const archive_limits& limits = {}, const sdist_member_visitor& on_member = {});

// PEP 643: PKG-INFO promises what every wheel built from the sdist says when it is Metadata-Version
// 2.2 or later and names no field Dynamic. Only then is it served as the sdist's core metadata
// (PEP 658 wants the metadata served to be the distribution's own, which an installer may trust
// in place of building it).
bool has_static_metadata(const metadata::core_metadata& metadata);

}  // namespace wheelhouse::ingest
