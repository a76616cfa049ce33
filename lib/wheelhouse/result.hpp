#pragma once
// A value or an error a person can act on: what lib/ returns instead of throwing.

#include <cassert>
#include <optional>
#include <string>
#include <utility>
#include <variant>

namespace wheelhouse {

// What went wrong, in the terms the server maps to one HTTP status at its edge.
enum class error_kind {
    invalid,       // the input is malformed or breaks a rule: 400
    unauthorized,  // no valid credentials: 401
    forbidden,     // credentials without the right: 403
    not_found,     // 404
    conflict,      // the name is taken by other bytes: 409
    too_large,     // past a size limit: 413
    unavailable,   // busy, try again later: 503
    upstream,      // a remote host failed or lied: 502
    timeout,       // a remote host did not answer in time: 504
    internal,      // our own fault (disk, database): 500
};

struct error {
    error_kind kind = error_kind::invalid;
    std::string message;  // says what was wrong and, where it can, how to fix it
};

inline error make_error(error_kind kind, std::string message) { return error{kind, std::move(message)}; }
inline error invalid(std::string message) { return error{error_kind::invalid, std::move(message)}; }

template <class T>
class [[nodiscard]] result {
public:
    result(T value) : state_(std::in_place_index<0>, std::move(value)) {}  // NOLINT: implicit by design
    result(wheelhouse::error failure) : state_(std::in_place_index<1>, std::move(failure)) {}  // NOLINT

    bool has_value() const noexcept { return state_.index() == 0; }
    explicit operator bool() const noexcept { return has_value(); }

    T& value() & { assert(has_value()); return std::get<0>(state_); }
    const T& value() const& { assert(has_value()); return std::get<0>(state_); }
    T&& value() && { assert(has_value()); return std::get<0>(std::move(state_)); }
    T& operator*() & { return value(); }
    const T& operator*() const& { return value(); }
    T* operator->() { return &value(); }
    const T* operator->() const { return &value(); }

    const wheelhouse::error& error() const { assert(!has_value()); return std::get<1>(state_); }

private:
    std::variant<T, wheelhouse::error> state_;
};

// Success without a value, or an error.
template <>
class [[nodiscard]] result<void> {
public:
    result() = default;
    result(wheelhouse::error failure) : failure_(std::move(failure)) {}  // NOLINT: implicit by design

    bool has_value() const noexcept { return !failure_.has_value(); }
    explicit operator bool() const noexcept { return has_value(); }
    const wheelhouse::error& error() const { assert(failure_); return *failure_; }

private:
    std::optional<wheelhouse::error> failure_;
};

}  // namespace wheelhouse
