#pragma once
// A wheel's RECORD (packaging.python.org "Recording installed projects", "Binary distribution
// format"): CSV rows of path, hash ("sha256=<urlsafe-base64, no padding>") and size in bytes.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "wheelhouse/crypto/hasher.hpp"
#include "wheelhouse/result.hpp"

namespace wheelhouse::ingest {

struct record_row {
    std::string path;
    std::optional<crypto::hash_algorithm> algorithm;  // absent when the hash column is empty
    std::string digest;                               // urlsafe base64 without padding
    std::optional<std::uint64_t> size;                // absent when the size column is empty
    std::size_t line = 0;                             // 1-based, for messages
};

// Parses RECORD as CSV (RFC 4180 quoting, "\n" or "\r\n" line ends, blank lines skipped).
// Refuses rows that are not path,hash,size; hash algorithms weaker than sha256 or unknown;
// sizes that are not decimal; the same path twice. Errors name the line.
result<std::vector<record_row>> parse_record(std::string_view text);

}  // namespace wheelhouse::ingest
