#pragma once
// Everything that makes a file a wheel this index will serve under its filename: the archive
// checks of wheel_archive, plus the agreement of its .dist-info directory and METADATA with
// what the filename says (pip discards a wheel whose METADATA version differs from its name's).

#include <filesystem>
#include <optional>
#include <string_view>

#include "wheelhouse/ingest/wheel_archive.hpp"
#include "wheelhouse/metadata/core_metadata.hpp"
#include "wheelhouse/pep427/wheel_filename.hpp"
#include "wheelhouse/pep825/variant_metadata.hpp"
#include "wheelhouse/result.hpp"

namespace wheelhouse::ingest {

struct validated_wheel {
    wheel_archive archive;
    metadata::core_metadata metadata;  // archive.metadata, parsed
    // A variant wheel's variant.json, parsed; its `variants` holds exactly the filename's label.
    std::optional<pep825::variant_metadata> variant;
};

// read_wheel_archive, then the checks below.
result<validated_wheel> validate_wheel(const std::filesystem::path& path, const pep427::wheel_filename& wheel,
                                       const archive_limits& limits = {});

// read_remote_wheel_archive (what the directory, WHEEL and METADATA tell), then the checks below.
result<validated_wheel> validate_remote_wheel(range_cache& file, const pep427::wheel_filename& wheel,
                                              const archive_limits& limits = {});

// The .dist-info directory's name part normalises to the filename's project ("flash_attn-2.8.3.dist-info"
// for flash_attn-2.8.3+cu128-…whl), as pip requires.
result<void> check_dist_info_name(std::string_view dist_info, const pep427::wheel_filename& wheel);

// PEP 825: a wheel with a variant label carries a valid variant.json whose `variants` holds
// exactly that label; nullopt for a wheel without a label (a variant.json there is not read).
result<std::optional<pep825::variant_metadata>> check_variant_metadata(const wheel_archive& archive,
                                                                       const pep427::wheel_filename& wheel);

// METADATA's Name normalises to the filename's, and its Version is the same PEP 440 version,
// local label included.
result<void> check_metadata_matches(const metadata::core_metadata& metadata, const pep427::wheel_filename& wheel);

}  // namespace wheelhouse::ingest
