#include <catch2/catch.hpp>

#include <string>

#include "wheelhouse/error_text.hpp"
#include "wheelhouse/pep427/wheel_filename.hpp"
#include "wheelhouse/pep625/sdist_filename.hpp"
#include "wheelhouse/text/ascii.hpp"
#include "wheelhouse/text/file_name.hpp"

using wheelhouse::detail_of;
using wheelhouse::reason_of;
using wheelhouse::reason_budget;
using wheelhouse::text::check_file_name_bytes;
using wheelhouse::text::ends_with_ignoring_case;
using wheelhouse::text::fits_status_line;
using wheelhouse::text::refuse_file_name;

TEST_CASE("text: a file name's bytes are refused with the byte, its position and the kind of file", "[text]") {
    struct row {
        std::string filename;
        const char* reason;  // the whole status-line reason
    };
    const row table[] = {
        {"d\xC3\xA9mo-1.0.tar.gz", "sdist filename: non-ASCII byte 0xC3 at position 2; sdist filenames are ASCII"},
        {"demo\x01-1.0.tar.gz", "sdist filename: control character byte 0x01 at position 5"},
        {"demo 1-1.0.tar.gz", "sdist filename: a space at position 5; sdist filenames have no spaces"},
        {"dist/demo-1.0.tar.gz", "sdist filename: path separator '/' at position 5; give a file name, not a path"},
        {"dist\\demo-1.0.tar.gz", "sdist filename: path separator '\\' at position 5; give a file name, not a path"},
        {std::string(256, 'a'), "sdist filename: it is 256 bytes long; at most 255 are allowed"},
    };
    for (const auto& expected : table) {
        CAPTURE(expected.filename);
        const auto refused = check_file_name_bytes("sdist", expected.filename);
        REQUIRE(refused);
        CHECK(std::string(reason_of(*refused)) == expected.reason);
        CHECK(detail_of(*refused).starts_with("the filename is '"));
    }
    CHECK_FALSE(check_file_name_bytes("sdist", std::string(255, 'a')));
    CHECK_FALSE(check_file_name_bytes("wheel", "flash_attn-2.8.3+cu128-cp312-cp312-linux_x86_64.whl"));
}

TEST_CASE("text: the wheel and sdist parsers refuse a file name's bytes in the one shape", "[text]") {
    const auto wheel = wheelhouse::pep427::parse_wheel_filename("d\xC3\xA9mo-1.0-py3-none-any.whl");
    REQUIRE_FALSE(wheel);
    CHECK(std::string(reason_of(wheel.error())) ==
          "wheel filename: non-ASCII byte 0xC3 at position 2; wheel filenames are ASCII (use the project's ASCII name)");
    const auto sdist = wheelhouse::pep625::parse_sdist_filename("demo 1-1.0.tar.gz");
    REQUIRE_FALSE(sdist);
    CHECK(sdist.error().message == check_file_name_bytes("sdist", "demo 1-1.0.tar.gz")->message);
}

TEST_CASE("text: a file-name refusal leads with the reason and quotes the filename in the detail", "[text]") {
    const auto refused = refuse_file_name("wheel", "a\nb.whl", "rename it", "it has a newline");
    CHECK(std::string(reason_of(refused)) == "wheel filename: rename it");
    CHECK(std::string(detail_of(refused)) == "it has a newline; the filename is 'a\\x0Ab.whl'");
    const std::string fits(reason_budget - std::string("sdist filename: ").size(), 'x');
    CHECK(fits_status_line("sdist", fits));
    CHECK_FALSE(fits_status_line("sdist", fits + "x"));
}

TEST_CASE("text: ends_with_ignoring_case compares ASCII letters without case", "[text]") {
    CHECK(ends_with_ignoring_case("demo-1.0.TAR.GZ", ".tar.gz"));
    CHECK(ends_with_ignoring_case("demo.Whl", ".whl"));
    CHECK(ends_with_ignoring_case(".whl", ".whl"));
    CHECK_FALSE(ends_with_ignoring_case("whl", ".whl"));
    CHECK_FALSE(ends_with_ignoring_case("demo.tar.gz", ".tgz"));
    CHECK(ends_with_ignoring_case("anything", ""));
}
