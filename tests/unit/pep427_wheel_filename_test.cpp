#include <catch2/catch.hpp>

#include <algorithm>
#include <string>
#include <vector>

#include "tsv_table.hpp"
#include "wheelhouse/error_text.hpp"
#include "wheelhouse/pep427/wheel_filename.hpp"

using wheelhouse::pep427::is_valid_tag;
using wheelhouse::pep427::parse_wheel_filename;
using wheelhouse::testing::tsv_table;

namespace {

std::string joined(const std::vector<std::string>& tags) {
    std::string out;
    for (const auto& tag : tags) {
        if (!out.empty()) out += '.';
        out += tag;
    }
    return out;
}

}  // namespace

TEST_CASE("pep427: real wheel filenames parse into the expected fields", "[pep427]") {
    const tsv_table table("wheel_filenames.tsv");
    REQUIRE(table.rows().size() >= 200);
    const auto filename = table.column("filename");
    const auto normalized_name = table.column("normalized_name");
    const auto normalized_version = table.column("normalized_version");
    const auto build_number = table.column("build_number");
    const auto build_suffix = table.column("build_suffix");
    const auto python_tags = table.column("python_tags");
    const auto abi_tags = table.column("abi_tags");
    const auto platform_tags = table.column("platform_tags");
    for (const auto& row : table.rows()) {
        const std::string& given = row.fields[filename];
        CAPTURE(row.line, given);
        const auto result = parse_wheel_filename(given);
        if (!result) FAIL(result.error().message);
        const auto& wheel = *result;
        CHECK(wheel.filename == given);
        CHECK(wheel.normalized_name == row.fields[normalized_name]);
        CHECK(wheel.version.to_string() == row.fields[normalized_version]);
        CHECK(joined(wheel.python_tags) == row.fields[python_tags]);
        CHECK(joined(wheel.abi_tags) == row.fields[abi_tags]);
        CHECK(joined(wheel.platform_tags) == row.fields[platform_tags]);
        if (row.fields[build_number].empty()) {
            CHECK_FALSE(wheel.build.has_value());
        } else {
            REQUIRE(wheel.build.has_value());
            CHECK(std::to_string(wheel.build->number) == row.fields[build_number]);
            CHECK(wheel.build->suffix == row.fields[build_suffix]);
            CHECK(wheel.build->text == row.fields[build_number] + row.fields[build_suffix]);
        }
        // The parts as written are kept: the name and version are the filename's first two parts.
        CHECK(given.starts_with(wheel.name + "-" + wheel.version_text + "-"));
        CHECK(wheel.name.find('-') == std::string::npos);
        CHECK(wheel.version_text.find('-') == std::string::npos);
    }
}

TEST_CASE("pep427: the fields of one CUDA build, spelled out", "[pep427]") {
    const auto result = parse_wheel_filename("sageattention-2.2.0-290.129-cp312-cp312-linux_x86_64.whl");
    REQUIRE(result.has_value());
    CHECK(result->name == "sageattention");
    CHECK(result->version_text == "2.2.0");
    REQUIRE(result->build.has_value());
    CHECK(result->build->number == 290);
    CHECK(result->build->suffix == ".129");
    CHECK(result->build->text == "290.129");

    const auto torch = parse_wheel_filename("torch-2.8.0+cu128-cp312-cp312-manylinux_2_28_x86_64.whl");
    REQUIRE(torch.has_value());
    CHECK(torch->version_text == "2.8.0+cu128");
    CHECK(torch->version.public_string() == "2.8.0");
    CHECK(torch->version.local_string() == "cu128");
    CHECK_FALSE(torch->build.has_value());
    CHECK(torch->python_tags == std::vector<std::string>{"cp312"});
    CHECK(torch->platform_tags == std::vector<std::string>{"manylinux_2_28_x86_64"});

    const auto legacy = parse_wheel_filename("PyYAML-6.0.1-cp310-cp310-manylinux_2_17_x86_64.manylinux2014_x86_64.whl");
    REQUIRE(legacy.has_value());
    CHECK(legacy->name == "PyYAML");
    CHECK(legacy->normalized_name == "pyyaml");
    CHECK(legacy->platform_tags == std::vector<std::string>{"manylinux_2_17_x86_64", "manylinux2014_x86_64"});
}

TEST_CASE("pep427: invalid filenames are refused with the precise reason", "[pep427]") {
    const tsv_table table("invalid_wheel_filenames.tsv");
    REQUIRE(table.rows().size() >= 50);
    const auto filename = table.column("filename");
    const auto reason = table.column("reason");
    for (const auto& row : table.rows()) {
        CAPTURE(row.line, row.fields[filename]);
        const auto result = parse_wheel_filename(row.fields[filename]);
        REQUIRE_FALSE(result.has_value());
        const std::string& message = result.error().message;
        CHECK(result.error().kind == wheelhouse::error_kind::invalid);
        CHECK_THAT(message, Catch::Contains(row.fields[reason]));
        CHECK((message.starts_with("wheel filename: ") || message == "empty wheel filename"));
        // Printable ASCII but for the newline between the reason and its detail (the filename,
        // quoted): the filename's own bytes never reach a status line or a log raw.
        CHECK(std::count(message.begin(), message.end(), '\n') <= 1);
        CHECK(std::none_of(message.begin(), message.end(), [](char c) {
            return c != '\n' && (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) >= 0x7f);
        }));
        CHECK(wheelhouse::reason_of(result.error()).size() <= wheelhouse::reason_budget);
    }
}

TEST_CASE("pep427: PEP 825 variant labels are read and told from build tags", "[pep427][pep825]") {
    const tsv_table table("variant_wheel_filenames.tsv");
    REQUIRE(table.rows().size() >= 10);
    const auto filename = table.column("filename");
    const auto normalized_name = table.column("normalized_name");
    const auto normalized_version = table.column("normalized_version");
    const auto build_number = table.column("build_number");
    const auto python_tags = table.column("python_tags");
    const auto abi_tags = table.column("abi_tags");
    const auto platform_tags = table.column("platform_tags");
    const auto variant_label = table.column("variant_label");
    for (const auto& row : table.rows()) {
        CAPTURE(row.line, row.fields[filename]);
        const auto result = parse_wheel_filename(row.fields[filename]);
        if (!result) FAIL(result.error().message);
        CHECK(result->normalized_name == row.fields[normalized_name]);
        CHECK(result->version.to_string() == row.fields[normalized_version]);
        CHECK((result->build ? std::to_string(result->build->number) : std::string()) == row.fields[build_number]);
        CHECK(joined(result->python_tags) == row.fields[python_tags]);
        CHECK(joined(result->abi_tags) == row.fields[abi_tags]);
        CHECK(joined(result->platform_tags) == row.fields[platform_tags]);
        CHECK(result->variant_label.value_or("") == row.fields[variant_label]);
    }
}

TEST_CASE("pep427: a bad version carries the pep440 reason", "[pep427]") {
    const auto result = parse_wheel_filename("flash_attn-2.8.3.post1.post2-cp312-cp312-linux_x86_64.whl");
    REQUIRE_FALSE(result.has_value());
    CHECK_THAT(result.error().message, Catch::Contains("bad version: version '2.8.3.post1.post2': two post-release segments"));
}

TEST_CASE("pep427: the part count is reported with the expected form", "[pep427]") {
    const auto result = parse_wheel_filename("flash_attn-2.8.3-linux_x86_64.whl");
    REQUIRE_FALSE(result.has_value());
    CHECK_THAT(result.error().message, Catch::Contains("found 3 '-'-separated parts where 5, 6 or 7 are expected"));
    CHECK_THAT(result.error().message,
               Catch::Contains("{distribution}-{version}(-{build tag})?-{python tag}-{abi tag}-{platform tag}"
                               "(-{variant label})?.whl"));
}

TEST_CASE("pep427: 255 bytes are allowed, 256 are not", "[pep427]") {
    const std::string head = "demo-1.0-py3-none-";
    const std::string tail = ".whl";
    const std::string longest = head + std::string(255 - head.size() - tail.size(), 'x') + tail;
    REQUIRE(longest.size() == 255);
    CHECK(parse_wheel_filename(longest).has_value());
    const std::string too_long = head + std::string(256 - head.size() - tail.size(), 'x') + tail;
    const auto result = parse_wheel_filename(too_long);
    REQUIRE_FALSE(result.has_value());
    CHECK_THAT(result.error().message, Catch::Contains("it is 256 bytes long"));
}

TEST_CASE("pep427: which tags are valid", "[pep427]") {
    for (const char* tag : {"py3", "cp314t", "abi3", "none", "any", "win_amd64", "macosx_11_0_arm64",
                            "musllinux_1_2_x86_64", "graalpy242_311_native", "pypy310_pp73", "PY3"}) {
        CAPTURE(tag);
        CHECK(is_valid_tag(tag));
    }
    for (const char* tag : {"", "py3.py2", "linux-x86_64", "any+x", "../x", "py 3", "é"}) {
        CAPTURE(tag);
        CHECK_FALSE(is_valid_tag(tag));
    }
}
