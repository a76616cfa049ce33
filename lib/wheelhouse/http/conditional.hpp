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

// An HTTP-date (RFC 9110 §5.6.7) in its preferred form, IMF-fixdate: "Sun, 06 Nov 1994 08:49:37 GMT".
std::string http_date(std::int64_t unix_seconds);

// The instant an HTTP-date names, in any of the three forms a recipient must accept (IMF-fixdate,
// RFC 850's, asctime's); nullopt for anything else, which If-Modified-Since must then ignore.
std::optional<std::int64_t> parse_http_date(std::string_view date) noexcept;

// RFC 9110 §13.1.3 for a request that sent no If-None-Match (which wins when both are sent):
// whether `if_modified_since` names an instant at or after `last_modified` (Unix seconds), so the
// client's copy is current. False when the field is absent or not a date.
bool unmodified_since(std::string_view if_modified_since, std::int64_t last_modified) noexcept;

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
