#include <catch2/catch.hpp>

#include <algorithm>
#include <string>

#include "wheelhouse/metadata/core_metadata.hpp"
#include "wheelhouse/metadata/field_validation.hpp"

using namespace wheelhouse;
using namespace wheelhouse::metadata;

namespace {

// A METADATA that passes, with `lines` (each ending in "\n") added to its headers.
core_metadata with_headers(const std::string& lines, const std::string& metadata_version = "2.4") {
    const std::string text = "Metadata-Version: " + metadata_version + "\nName: flash-attn\nVersion: 2.8.3\n" + lines +
                             "\nThe description.\n";
    auto parsed = parse_core_metadata(text);
    INFO(text);
    REQUIRE(parsed.has_value());
    return std::move(parsed).value();
}

bool no_control_bytes(const std::string& text) {
    return std::none_of(text.begin(), text.end(), [](char c) { return static_cast<unsigned char>(c) < 0x20 || c == 0x7f; });
}

}  // namespace

TEST_CASE("metadata fields: what real build backends write passes", "[metadata]") {
    const char* accepted[] = {
        "",
        "Summary: Flash Attention: Fast and Memory-Efficient Exact Attention\n",
        "Summary: <img src=x onerror=alert(1)> \"quoted\" & 'single'\tand a tab\n",
        "Summary: Ré, 日本語, emoji \xF0\x9F\x9A\x80\n",
        "Summary: \n",
        "Requires-Python: >=3.9\n",
        "Requires-Python: >=2.7, !=3.0.*, !=3.1.*, !=3.2.*, !=3.3.*, !=3.4.*\n",
        "Requires-Python: >=3.8,\n",
        "Requires-Python: \n",
        "Requires-Python: ~=3.10\n",
        "Requires-Dist: torch\nRequires-Dist: einops\n",
        "Requires-Dist: nvidia-cudnn-cu12==9.10.2.21; platform_system == \"Linux\" and platform_machine == \"x86_64\"\n",
        "Requires-Dist: botocore[crt] (<2.0a0,>=1.21.0) ; extra == 'crt'\n",
        "Requires-Dist: kernels @ https://example.org/kernels-1.0-py3-none-any.whl\n",
        "Provides-Extra: opt-einsum\nProvides-Extra: Tests_No.Zope\n",
        "Project-URL: Homepage, https://github.com/Dao-AILab/flash-attention\n",
        "Project-URL: release notes, https://numpy.org/doc/stable/release\n",
        "Project-URL: Contact, https://groups.google.com/forum/#!forum/python-cffi\n",
        "Project-URL: Source,https://github.com/x/y\n",
        "Project-URL: Tracker, http://bugs.example.org:8080/issues?q=1\n",
        "Classifier: anything at all: not shown as a field\nKeywords: a,b\n",
    };
    for (const char* lines : accepted) {
        CAPTURE(lines);
        const auto checked = validate_fields(with_headers(lines));
        INFO((checked ? std::string() : checked.error().message));
        CHECK(checked);
    }
    for (const char* version : {"1.0", "1.1", "1.2", "2.0", "2.1", "2.2", "2.3", "2.4", "2.5", "2.17"}) {
        CAPTURE(version);
        CHECK(validate_fields(with_headers("", version)));
    }
}

TEST_CASE("metadata fields: each bad value is refused with the field, the value and the fix", "[metadata]") {
    struct row {
        std::string lines;
        const char* phrases[3];
    };
    const row table[] = {
        // Issue 14: this Requires-Python was stored and handed to pip, which cannot read it.
        {"Requires-Python: >=3.8\">\xE2\x80\xA6\n",
         {"METADATA's Requires-Python '>=3.8\">\\xE2\\x80\\xA6'", "not a PEP 440 version specifier set", "such as '>=3.9'"}},
        {"Requires-Python: >=3.6.*\n", {"Requires-Python '>=3.6.*'", "'.*' prefix match goes only", "such as '>=3.9'"}},
        {"Requires-Python: 3.9\n", {"Requires-Python '3.9'", "has no operator", "'>=3.9'"}},
        {"Requires-Python: >=3.9,\n <4\n", {"Requires-Python '>=3.9,\\x0A<4'", "line break", "one line"}},
        {"Requires-Python: >=3.9\nRequires-Python: >=3.10\n", {"more than one Requires-Python", "keep one", ""}},
        {"Requires-Dist: torch>=2.8,\n", {"Requires-Dist 'torch>=2.8,'", "not a PEP 508 requirement", "such as 'torch>=2.8'"}},
        {"Requires-Dist: torch; python_version >= 3.9\n", {"Requires-Dist", "unknown marker variable '3.9'", "such as"}},
        {"Requires-Dist: torch (>=2.8\n", {"Requires-Dist", "a '(' without its ')'", ""}},
        {"Requires-Dist: -torch\n", {"Requires-Dist '-torch'", "must start and end with a letter or digit", ""}},
        {"Provides-Extra: gpu!\n", {"Provides-Extra 'gpu!'", "not a valid extra name", "PEP 685"}},
        {"Provides-Extra: _gpu\n", {"Provides-Extra '_gpu'", "not a valid extra name", ""}},
        {"Summary: two\n lines\n", {"Summary 'two\\x0Alines'", "spans several lines", "one line"}},
        {"Summary: a bell \x07\n", {"Summary 'a bell \\x07'", "control character", "remove it"}},
        {"Summary: " + std::string(513, 'x') + "\n", {"Summary is 513 characters long", "at most 512", ""}},
        {"Summary: first\nSummary: second\n", {"more than one Summary", "", ""}},
        {"Project-URL: https://example.org\n", {"Project-URL 'https://example.org'", "no ', '", "'Label, https://host/path'"}},
        {"Project-URL: Homepage\n", {"Project-URL 'Homepage'", "no ', '", "'Label, https://host/path'"}},
        {"Project-URL: , https://example.org\n", {"empty label", "", ""}},
        {"Project-URL: A label far longer than thirty-two characters, https://example.org\n", {"at most 32 characters", "", ""}},
        {"Project-URL: Source, javascript:alert(1)\n", {"Project-URL 'Source, javascript:alert(1)'", "http:// or https://", ""}},
        {"Project-URL: Source, https:///path\n", {"with a host", "", ""}},
        {"Project-URL: Source, https://exa mple.org\n", {"with a host", "", ""}},
        {"Dynamic: Version\n", {"Dynamic 'Version'", "never dynamic (PEP 643)", "remove it"}},
        {"Dynamic: name\n", {"Dynamic 'name'", "never dynamic", ""}},
        {"Dynamic: Requires-Dist\nDynamic: Metadata-Version\n", {"Dynamic 'Metadata-Version'", "", ""}},
    };
    for (const auto& [lines, phrases] : table) {
        CAPTURE(lines);
        const auto checked = validate_fields(with_headers(lines));
        REQUIRE_FALSE(checked);
        CHECK(checked.error().kind == error_kind::invalid);
        for (const char* phrase : phrases) CHECK_THAT(checked.error().message, Catch::Contains(phrase));
        CHECK(no_control_bytes(checked.error().message));
        CHECK(checked.error().message.size() < 1000);
    }
}

TEST_CASE("metadata fields: the Metadata-Version, Name and Version headers themselves", "[metadata]") {
    for (const char* version : {"2", "2.", "2.x", "1.3", "0.9", "3.0", "10.1", " 2.1"}) {
        CAPTURE(version);
        const auto parsed = parse_core_metadata(std::string("Metadata-Version: ") + version +
                                                "\nName: flash-attn\nVersion: 2.8.3\n");
        REQUIRE(parsed);
        const auto checked = validate_fields(*parsed);
        // " 2.1" loses its leading space in parsing and is fine.
        if (std::string(version) == " 2.1") {
            CHECK(checked);
            continue;
        }
        REQUIRE_FALSE(checked);
        CHECK_THAT(checked.error().message, Catch::Contains("not a core metadata version"));
    }
    const auto bad_name = parse_core_metadata("Metadata-Version: 2.1\nName: flash attn\nVersion: 2.8.3\n");
    REQUIRE(bad_name);
    CHECK_THAT(validate_fields(*bad_name).error().message, Catch::Contains("Name 'flash attn' is not a valid project name"));
    const auto bad_version = parse_core_metadata("Metadata-Version: 2.1\nName: flash-attn\nVersion: 2.8.3-final\n");
    REQUIRE(bad_version);
    CHECK_THAT(validate_fields(*bad_version).error().message, Catch::Contains("Version '2.8.3-final' is not a PEP 440 version"));
}
