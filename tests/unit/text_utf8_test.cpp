#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "wheelhouse/text/utf8.hpp"

using wheelhouse::text::find_utf8_fault;
using wheelhouse::text::is_valid_utf8;
using wheelhouse::text::replace_invalid_utf8;

namespace {
const std::string fffd = "\xEF\xBF\xBD";  // U+FFFD
}

TEST_CASE("text: valid UTF-8 comes back unchanged", "[text]") {
    for (const std::string& valid : std::vector<std::string>{
             "", "plain ascii", "d\xC3\xA9mo", "\xF0\x9F\x98\x80",  // é, U+1F600
             "\xE0\xA0\x80",                                         // U+0800, the lowest 3-byte form
             "\xED\x9F\xBF",                                         // U+D7FF, just below the surrogates
             "\xF4\x8F\xBF\xBF",                                     // U+10FFFF, the highest code point
             std::string("a\0b", 3), "\x7F"}) {
        CAPTURE(valid);
        CHECK(replace_invalid_utf8(valid) == valid);
    }
}

TEST_CASE("text: ill-formed UTF-8 is replaced one U+FFFD per maximal subpart, as Python does", "[text]") {
    // Expected values are bytes.decode("utf-8", "replace") of Python 3.11, re-encoded.
    struct example {
        std::string input;
        std::string expected;
    };
    const example examples[] = {
        {"a\xC3", "a" + fffd},                               // cut short at the end
        {"\xE2\x82", fffd},                                  // two bytes of a three-byte form: one
        {"\xF0\x9F\x98", fffd},                              // three of four: one
        {"\xFF\xFE", fffd + fffd},                           // bytes UTF-8 never uses
        {"\x80", fffd},                                      // a continuation byte alone
        {"\xC0\xAF", fffd + fffd},                           // overlong '/': C0 is never a lead byte
        {"\xE0\x80\x80", fffd + fffd + fffd},                // overlong: E0 needs A0..BF next
        {"\xED\xA0\x80", fffd + fffd + fffd},                // a UTF-16 surrogate, U+D800
        {"\xF4\x90\x80\x80", fffd + fffd + fffd + fffd},     // past U+10FFFF
        {"\xC3\xA9\xE9", "\xC3\xA9" + fffd},                 // Latin-1 'é' after a UTF-8 one
        {"d\xE9mo-1.0-py3-none-any.whl", "d" + fffd + "mo-1.0-py3-none-any.whl"},
        // The Unicode Standard's own example (Table 3-8).
        {"\x61\xF1\x80\x80\xE1\x80\xC2\x62\x80\x63\x80\xBF\x64", "a" + fffd + fffd + fffd + "b" + fffd + "c" + fffd + fffd + "d"},
    };
    for (const auto& [input, expected] : examples) {
        CAPTURE(input);
        CHECK(replace_invalid_utf8(input) == expected);
    }
}

TEST_CASE("text: is_valid_utf8 is exactly 'replace_invalid_utf8 changes nothing'", "[text]") {
    const char* samples[] = {"", "ascii", "R\xC3\xA9", "\xE6\x97\xA5\xE6\x9C\xAC", "\xF0\x9F\x90\x8D",
                             "\xF4\x8F\xBF\xBF", "\xC3", "\xFF", "\xC0\xAF", "\xED\xA0\x80", "\xF4\x90\x80\x80",
                             "\xE2\x82", "a\x80" "b", "\xEF\xBF\xBD"};
    for (const char* sample : samples) {
        CAPTURE(sample);
        CHECK(is_valid_utf8(sample) == (replace_invalid_utf8(sample) == sample));
    }
    CHECK(is_valid_utf8("R\xC3\xA9"));
    CHECK_FALSE(is_valid_utf8("\xC3"));
}

TEST_CASE("text: find_utf8_fault says where UTF-8 first breaks and how", "[text]") {
    struct example {
        std::string input;
        std::size_t offset;
        const char* what;
    };
    const example examples[] = {
        {"ab\xFF", 2, "byte 0xff cannot start a character"},
        {"\x80", 0, "byte 0x80 cannot start a character"},
        {"\xC0\xAF", 0, "byte 0xc0 cannot start a character"},
        {"d\xC3\xA9mo \xE2\x82", 6, "the text ends inside a 3-byte character"},
        {"\xE0\x80\x80", 0, "a malformed 3-byte character"},  // overlong
        {"x\xED\xA0\x80", 1, "a malformed 3-byte character"},  // a surrogate
        {"\xF4\x90\x80\x80", 0, "a malformed 4-byte character"},  // past U+10FFFF
        {"\xF0\x9F\x98", 0, "the text ends inside a 4-byte character"},
    };
    for (const auto& e : examples) {
        CAPTURE(e.input);
        const auto fault = find_utf8_fault(e.input);
        REQUIRE(fault);
        CHECK(fault->offset == e.offset);
        CHECK(fault->what == e.what);
        CHECK_FALSE(is_valid_utf8(e.input));
    }
    CHECK_FALSE(find_utf8_fault("d\xC3\xA9mo \xF0\x9F\x98\x80"));
}
