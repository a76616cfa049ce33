#pragma once
// Durations as the CLI takes them: `--expires 90d`.

#include <chrono>
#include <string_view>

#include "wheelhouse/result.hpp"

namespace wheelhouse::auth {

// One or more number-unit pairs, summed: "90d", "12h", "30m", "1y", "1d12h". Units: s
// (seconds), m (minutes, never months), h, d, w (7 days), y (365 days). The total must be
// more than zero and at most 100 years.
result<std::chrono::seconds> parse_duration(std::string_view text);

}  // namespace wheelhouse::auth
