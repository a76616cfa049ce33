#pragma once
// How a setting of each C++ type is read, whichever source it comes from. value_kind<T> has:
//   input      what CLI11 parses from the flag or its WHEELHOUSE_* variable (CLI11's own
//              conversion errors, e.g. "Could not convert: --threads = abc", stay as they are);
//   expected   what a TOML value must be: "'KEY' must be <expected>";
//   from_file  the TOML value as an input, or nullopt when it is of the wrong type;
//   assign     an input into the setting; its error is a bad value, phrased with the fix.

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <toml++/toml.h>

#include "wheelhouse/catalog/records.hpp"
#include "wheelhouse/config/settings.hpp"
#include "wheelhouse/result.hpp"
#include "wheelhouse/upstream/routing.hpp"

namespace wheelhouse::config {

template <class T>
struct value_kind;  // only the types below can be settings

// A TOML integer in [0, largest]; nullopt for anything else (a string, a float, -1).
std::optional<std::uint64_t> file_count(const toml::node& node, std::uint64_t largest);

// The plain kinds: a string, a count or a flag, converted to the setting as it is.
struct text_value {
    using input = std::string;
    static constexpr std::string_view expected = "a string";
    static std::optional<input> from_file(const toml::node& node) { return node.value<std::string>(); }
};

template <class Count, std::uint64_t largest>
struct count_value {
    using input = Count;
    static std::optional<input> from_file(const toml::node& node) {
        const auto count = file_count(node, largest);
        return count ? std::optional<input>(static_cast<Count>(*count)) : std::nullopt;
    }
};

template <class T, class Source>
struct plain_value : Source {
    static result<void> assign(T& out, const typename Source::input& value) {
        out = T(value);
        return {};
    }
};

template <>
struct value_kind<std::string> : plain_value<std::string, text_value> {};

template <>
struct value_kind<std::filesystem::path> : plain_value<std::filesystem::path, text_value> {};

template <>
struct value_kind<unsigned> : plain_value<unsigned, count_value<unsigned, std::numeric_limits<unsigned>::max()>> {
    static constexpr std::string_view expected = "a non-negative integer (at most 4294967295)";
};

template <>
struct value_kind<std::uint64_t>
    : plain_value<std::uint64_t, count_value<std::uint64_t, std::numeric_limits<std::int64_t>::max()>> {
    static constexpr std::string_view expected = "a non-negative integer";
};

// Whole seconds, written as a plain number everywhere.
template <>
struct value_kind<std::chrono::seconds> : plain_value<std::chrono::seconds, value_kind<unsigned>> {};

// A flag: --name alone sets it; WHEELHOUSE_NAME=0/false/no/off clears it (over the file's true).
template <>
struct value_kind<bool> {
    using input = bool;
    static constexpr std::string_view expected = "true or false";
    static std::optional<input> from_file(const toml::node& node) { return node.value<bool>(); }
    static result<void> assign(bool& out, input value) {
        out = value;
        return {};
    }
};

// Host names: a comma-separated list on the command line; in the file, that or an array.
template <>
struct value_kind<std::vector<std::string>> {
    using input = std::string;
    static constexpr std::string_view expected = "an array of host names";
    static std::optional<input> from_file(const toml::node& node);
    static result<void> assign(std::vector<std::string>& out, const input& value);
};

// Upstream indexes and their routes, in order: the flag once each (--upstream A --upstream B),
// the variable as one value with ';' between them, the file as an array of the same strings or
// of tables ({name, url}; {index, projects, upstream}).
template <class Entry>
struct ordered_list_value {
    using input = std::vector<std::string>;
    static constexpr char delimiter = ';';
};

template <>
struct value_kind<std::vector<upstream::upstream_index>> : ordered_list_value<upstream::upstream_index> {
    static constexpr std::string_view expected = "an array of \"NAME=URL\" strings, or of tables with name and url";
    static std::optional<input> from_file(const toml::node& node);
    static result<void> assign(std::vector<upstream::upstream_index>& out, const input& value);
};

template <>
struct value_kind<std::vector<upstream::route>> : ordered_list_value<upstream::route> {
    static constexpr std::string_view expected =
        "an array of \"INDEX: PROJECT... = UPSTREAM\" strings, or of tables with index, projects and upstream";
    static std::optional<input> from_file(const toml::node& node);
    static result<void> assign(std::vector<upstream::route>& out, const input& value);
};

// "ISSUER=FILE", as --oidc-jwks takes it; `invalid` with an example otherwise.
result<pinned_key_file> parse_pinned_key_file(std::string_view text);

template <>
struct value_kind<std::vector<pinned_key_file>> : ordered_list_value<pinned_key_file> {
    static constexpr std::string_view expected = "an array of \"ISSUER=FILE\" strings";
    static std::optional<input> from_file(const toml::node& node);
    static result<void> assign(std::vector<pinned_key_file>& out, const input& value);
};

template <>
struct value_kind<catalog::download_mode> : text_value {
    static result<void> assign(catalog::download_mode& out, const input& value);
};

}  // namespace wheelhouse::config
