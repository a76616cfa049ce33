#pragma once
// One row of the settings table: a setting's name, which is its --flag, its key in the TOML
// file and, upper-cased with '_' for '-', its WHEELHOUSE_* variable; the commands that take
// it; its help; and, from its field's type (value_kind), how each source's value is read.

#include <functional>
#include <string>
#include <string_view>
#include <type_traits>

#include <CLI/App.hpp>
#include <toml++/toml.h>

#include "wheelhouse/config/settings.hpp"
#include "wheelhouse/config/value_kind.hpp"
#include "wheelhouse/result.hpp"

namespace wheelhouse::config {

struct setting {
    option_set taken_by;    // the smallest set of options it belongs to
    std::string_view name;  // "page-max-age"
    std::string_view help;
    // Registers --name with its variable; a value given is remembered in overrides::given.
    std::function<CLI::Option*(CLI::App&, overrides&)> add_option;
    // The file's value into the setting; the error is "'name' must be …" or "key 'name': …".
    std::function<result<void>(settings&, const toml::node&)> from_file;
    // Checks (or completes, e.g. 0 -> one per core) the value that won; empty: nothing to check.
    std::function<result<void>(settings&)> check;
};

// WHEELHOUSE_ + the name, upper case, '-' -> '_': "page-max-age" -> WHEELHOUSE_PAGE_MAX_AGE.
std::string environment_name(std::string_view name);

// CLI11 reads a flag's value (`--private=no`, WHEELHOUSE_PRIVATE=0) with its own words
// (1/0, true/false, yes/no, on/off); anything else is refused here rather than thrown past main.
CLI::Validator flag_word();

template <class T>
CLI::Option* add_setting_option(CLI::App& command, overrides& values, std::string_view name, T settings::*member,
                                std::string_view help) {
    using kind = value_kind<T>;
    auto remember = [&values, name, member](const typename kind::input& value) {
        values.given[std::string(name)] = [member, value](settings& out) { return kind::assign(out.*member, value); };
    };
    const std::string flag = "--" + std::string(name);
    CLI::Option* option = nullptr;
    if constexpr (std::is_same_v<T, bool>) {
        option = command.add_flag_function(flag, [remember](std::int64_t count) { remember(count > 0); },
                                           std::string(help))
                     ->check(flag_word());
    } else {
        option = command.add_option_function<typename kind::input>(flag, remember, std::string(help));
        if constexpr (requires { kind::delimiter; }) option->delimiter(kind::delimiter);
    }
    return option->envname(environment_name(name));
}

// One row: declare(option_set::serving, "page-max-age", &settings::page_max_age, "help"[, check]).
template <class T>
setting declare(option_set taken_by, std::string_view name, T settings::*member, std::string_view help,
                result<void> (*check)(T&) = nullptr) {
    setting row{taken_by, name, help, {}, {}, {}};
    row.add_option = [name, member, help](CLI::App& command, overrides& values) {
        return add_setting_option(command, values, name, member, help);
    };
    row.from_file = [name, member](settings& out, const toml::node& node) -> result<void> {
        using kind = value_kind<T>;
        const auto value = kind::from_file(node);
        if (!value) return invalid("'" + std::string(name) + "' must be " + std::string(kind::expected));
        if (auto assigned = kind::assign(out.*member, *value); !assigned)
            return invalid("key '" + std::string(name) + "': " + assigned.error().message);
        return {};
    };
    if (check) row.check = [member, check](settings& out) { return check(out.*member); };
    return row;
}

}  // namespace wheelhouse::config
