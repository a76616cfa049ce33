#pragma once
// A libzip source over a range_cache, so libzip reads a remote archive as if it were a file,
// and every read it makes is a (cached) range of the remote bytes.

#include <zip.h>

#include <optional>

#include "wheelhouse/ingest/range_cache.hpp"
#include "wheelhouse/result.hpp"

namespace wheelhouse::ingest {

// The state behind one source; it must outlive the zip_t opened from the source.
struct range_source_state {
    range_cache* cache = nullptr;
    std::uint64_t position = 0;
    zip_error_t error{};
    std::optional<wheelhouse::error> read_failure;  // the reader's own error, to report as it was
};

// A seekable, read-only source; zip_open_from_source takes it over (zip_source_free it when
// that fails). `state` must be zeroed with range_source_state{} and outlive the source.
zip_source_t* make_range_source(range_source_state& state, zip_error_t* failure);

}  // namespace wheelhouse::ingest
