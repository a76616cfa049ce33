#pragma once
// RFC 9110 preconditions and ranges, as pure functions of header values.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace wheelhouse::http_conditional {

// A strong entity tag for `body`: the first 128 bits of its SHA-256, in hex, quoted.
std::string strong_entity_tag(std::string_view body);

// True when an If-None-Match value ("*", or a list of entity tags, weak or strong) matches
// `etag` (a quoted strong tag) by weak comparison, as RFC 9110 asks for If-None-Match.
bool if_none_match_matches(std::string_view if_none_match, std::string_view etag) noexcept;

struct byte_range {
    std::uint64_t first = 0;
    std::uint64_t length = 0;
};

enum class range_outcome {
    whole,          // no usable Range: send the whole representation (200)
    partial,        // send `range` (206)
    unsatisfiable,  // 416
};

struct range_decision {
    range_outcome outcome = range_outcome::whole;
    byte_range range;
};

// Interprets a Range header against a representation of `size` bytes. A single
// "bytes=a-b", "bytes=a-" or "bytes=-n" is honoured; several ranges, other units or syntax
// errors fall back to the whole representation, as RFC 9110 allows.
range_decision decide_range(std::string_view range_header, std::uint64_t size) noexcept;

// The Content-Range value of a 206 for `range` (non-empty) of `size` bytes: "bytes 0-99/1000".
std::string content_range(const byte_range& range, std::uint64_t size);

}  // namespace wheelhouse::http_conditional
