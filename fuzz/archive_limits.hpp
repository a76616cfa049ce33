#pragma once
// The limits the archive harnesses (wheels, sdists) read with: small, so the limit paths are
// reached and one input never inflates gigabytes.

#include "wheelhouse/ingest/wheel_archive.hpp"

namespace wheelhouse::fuzz {

inline const ingest::archive_limits small_archive_limits{
    .max_entries = 64,
    .max_total_uncompressed = 4 << 20,
    .max_entry_uncompressed = 2 << 20,
    .max_compression_ratio = 250,
    .ratio_floor = 64 << 10,
    .max_metadata_size = 256 << 10,
    .max_central_directory = 64 << 10,
};

}  // namespace wheelhouse::fuzz
