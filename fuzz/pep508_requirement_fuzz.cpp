// PEP 508 requirements and environment markers: the whole input as a requirement, and as a
// marker. Beside memory safety:
// - a refusal has a message that quotes the input, without control bytes;
// - the canonical form parses back to a requirement that prints the same (parse∘print), with
//   the same normalised name, extras, URL and marker;
// - a requirement has a URL or version specifiers, never both;
// - a marker's canonical form is a fixed point too, and so is the tree parsed from it.

#include <string>

#include "fuzz_support.hpp"
#include "wheelhouse/pep503/name.hpp"
#include "wheelhouse/pep508/requirement.hpp"

namespace {

using namespace wheelhouse::pep508;

bool has_control_byte(const std::string& text) {
    for (unsigned char c : text) {
        if (c < 0x20 || c == 0x7F) return true;
    }
    return false;
}

void check_requirement(std::string_view text) {
    auto parsed = parse_requirement(text);
    if (!parsed) {
        const auto& message = parsed.error().message;
        WHEELHOUSE_FUZZ_CHECK(message.starts_with("requirement '") && !has_control_byte(message), message);
        return;
    }
    WHEELHOUSE_FUZZ_CHECK(!(parsed->url && !parsed->specifiers.empty()), std::string(text) + " has a URL and versions");
    WHEELHOUSE_FUZZ_CHECK(wheelhouse::pep503::is_valid_project_name(parsed->name), std::string(text) + ": bad name kept");
    const std::string printed = parsed->to_string();
    auto again = parse_requirement(printed);
    WHEELHOUSE_FUZZ_CHECK(again.has_value(), std::string(text) + " printed as " + printed + ", which does not parse");
    WHEELHOUSE_FUZZ_CHECK(again->to_string() == printed, printed + " reprinted as " + again->to_string());
    WHEELHOUSE_FUZZ_CHECK(again->name == wheelhouse::pep503::normalize(parsed->name), printed + ": the name changed");
    WHEELHOUSE_FUZZ_CHECK(again->url == parsed->url, printed + ": the URL changed");
    WHEELHOUSE_FUZZ_CHECK(again->marker.has_value() == parsed->marker.has_value(), printed + ": the marker came or went");
}

void check_marker(std::string_view text) {
    auto parsed = parse_marker(text);
    if (!parsed) {
        const auto& message = parsed.error().message;
        WHEELHOUSE_FUZZ_CHECK(message.starts_with("marker '") && !has_control_byte(message), message);
        return;
    }
    const std::string printed = parsed->to_string();
    auto again = parse_marker(printed);
    WHEELHOUSE_FUZZ_CHECK(again.has_value(), std::string(text) + " printed as " + printed + ", which does not parse");
    WHEELHOUSE_FUZZ_CHECK(again->to_string() == printed, printed + " reprinted as " + again->to_string());
    // Once printed, the tree itself is stable (printing normalises extra names, so the first
    // tree may differ from the second).
    auto third = parse_marker(again->to_string());
    WHEELHOUSE_FUZZ_CHECK(third.has_value() && *third == *again, printed + ": the reparsed tree is not stable");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const auto text = wheelhouse::fuzz::as_text(data, size);
    check_requirement(text);
    check_marker(text);
    return 0;
}
