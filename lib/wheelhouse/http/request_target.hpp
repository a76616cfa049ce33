#pragma once
// A request's target, taken apart and checked before any route sees it: decoded path segments
// and query parameters, with the absurd refused ("/simple/../", "%00", "%2F" inside a segment).

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "wheelhouse/result.hpp"

namespace wheelhouse::http_target {

struct request_target {
    std::vector<std::string> segments;  // "/simple/flash-attn/" -> {"simple", "flash-attn", ""}
    std::vector<std::pair<std::string, std::string>> query;
    bool trailing_slash() const noexcept { return !segments.empty() && segments.back().empty(); }
    std::optional<std::string_view> query_value(std::string_view key) const;
};

// Accepts origin-form targets only ("/path?query"). Refuses dot segments, NUL and other control
// characters (in path segments, query keys and query values alike), query values that are not
// UTF-8, encoded '/' or '\' inside a segment or query key, and malformed percent-escapes.
result<request_target> parse(std::string_view target);

}  // namespace wheelhouse::http_target
