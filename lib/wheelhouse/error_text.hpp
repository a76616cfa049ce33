#pragma once
// An error's message is shaped like a commit message: its first line is the reason, short and
// leading with the fix (twine and poetry show only the HTTP reason phrase, and cut nothing
// else), and what follows a newline is the detail (hashes, filenames, limits) for people who
// read the whole answer. A message without a newline is all reason.

#include <cstddef>
#include <string>
#include <string_view>

#include "wheelhouse/result.hpp"

namespace wheelhouse {

// The longest reason that goes whole into a status line; longer ones are cut between words there.
inline constexpr std::size_t reason_budget = 160;

// make_error and invalid with a detail: the reason, then the detail on the lines below it.
inline error make_error(error_kind kind, std::string reason, std::string_view detail) {
    if (!detail.empty()) reason.append("\n").append(detail);
    return make_error(kind, std::move(reason));
}
inline error invalid(std::string reason, std::string_view detail) {
    return make_error(error_kind::invalid, std::move(reason), detail);
}

inline std::string_view reason_of(const error& failure) {
    const std::string_view message = failure.message;
    return message.substr(0, message.find('\n'));
}

inline std::string_view detail_of(const error& failure) {
    const std::string_view message = failure.message;
    const auto newline = message.find('\n');
    return newline == std::string_view::npos ? std::string_view{} : message.substr(newline + 1);
}

// The whole error on one line, for logs and the command line: "reason (detail)".
inline std::string describe(const error& failure) {
    const auto detail = detail_of(failure);
    std::string line(reason_of(failure));
    if (!detail.empty()) line.append(" (").append(detail).append(")");
    return line;
}

}  // namespace wheelhouse
