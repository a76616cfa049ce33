#pragma once
// The rows of schema/0010_upstream.sql as the rest of the program sees them (beside records.hpp,
// which every catalog reader includes; these two are read by upstream_rows.cpp alone).

#include <cstdint>
#include <optional>
#include <string>

namespace wheelhouse::catalog {

// A name owned before its first upload.
struct reservation {
    std::string pattern;  // normalised: 'acme-*'
    std::optional<std::string> reason;
    std::int64_t created_ms = 0;
    std::string created_by;
};

// A file of an upstream project that this index fetched, checked and keeps.
struct kept_upstream_file {
    std::string sha256;
    std::string filename;
    std::string project;   // normalised
    std::string upstream;  // its name
    std::string url;
    std::uint64_t size = 0;       // 0: the file's bytes are not kept
    std::string metadata_sha256;  // "": its .metadata is not kept
    std::int64_t kept_ms = 0;
};

}  // namespace wheelhouse::catalog
