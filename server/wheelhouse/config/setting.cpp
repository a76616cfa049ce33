#include "wheelhouse/config/setting.hpp"

#include <CLI/TypeTools.hpp>

namespace wheelhouse::config {

std::string environment_name(std::string_view name) {
    std::string variable = "WHEELHOUSE_";
    for (const char c : name) variable += c == '-' ? '_' : static_cast<char>(c >= 'a' && c <= 'z' ? c - 32 : c);
    return variable;
}

CLI::Validator flag_word() {
    return CLI::Validator(
        [](std::string& word) -> std::string {
            bool ignored = false;
            if (CLI::detail::lexical_cast(word, ignored)) return {};
            return "'" + word + "' is neither on nor off; write 1 or 0 (or true/false, yes/no, on/off)";
        },
        "");
}

}  // namespace wheelhouse::config
