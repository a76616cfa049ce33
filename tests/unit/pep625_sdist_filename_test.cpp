#include <catch2/catch.hpp>

#include <string>

#include "wheelhouse/error_text.hpp"
#include "wheelhouse/pep625/sdist_filename.hpp"

using wheelhouse::reason_of;
using wheelhouse::pep625::canonical_sdist_filename;
using wheelhouse::pep625::looks_like_sdist;
using wheelhouse::pep625::parse_sdist_filename;

TEST_CASE("pep625: canonical sdist filenames parse into name and version", "[pep625]") {
    struct row {
        const char* filename;
        const char* normalized_name;
        const char* version;
        const char* stem;
    };
    const row table[] = {
        {"flash_attn-2.8.3.tar.gz", "flash-attn", "2.8.3", "flash_attn-2.8.3"},
        {"numpy-2.1.0.tar.gz", "numpy", "2.1.0", "numpy-2.1.0"},
        {"zope_interface-7.0.tar.gz", "zope-interface", "7.0", "zope_interface-7.0"},
        {"torch-2.10.0+cu130.tar.gz", "torch", "2.10.0+cu130", "torch-2.10.0+cu130"},
        {"a-1.tar.gz", "a", "1", "a-1"},
        {"pkg_2-1.0rc1.tar.gz", "pkg-2", "1.0rc1", "pkg_2-1.0rc1"},
        {"demo-1.0.post1.dev2.tar.gz", "demo", "1.0.post1.dev2", "demo-1.0.post1.dev2"},
        {"demo-1!2.0.tar.gz", "demo", "1!2.0", "demo-1!2.0"},
        {"sageattention-2.2.0.tar.gz", "sageattention", "2.2.0", "sageattention-2.2.0"},
    };
    for (const auto& expected : table) {
        CAPTURE(expected.filename);
        auto parsed = parse_sdist_filename(expected.filename);
        if (!parsed) FAIL(parsed.error().message);
        CHECK(parsed->filename == expected.filename);
        CHECK(parsed->normalized_name == expected.normalized_name);
        CHECK(parsed->version.to_string() == expected.version);
        CHECK(parsed->stem() == expected.stem);
        CHECK(canonical_sdist_filename(parsed->name, parsed->version) == expected.filename);
    }
}

TEST_CASE("pep625: legacy and bad sdist filenames are refused with the reason and the fix", "[pep625]") {
    struct row {
        std::string filename;
        const char* reason;  // contained in the status-line reason
    };
    const row table[] = {
        {"Flask-2.0.tar.gz", "rename it to flask-2.0.tar.gz"},
        {"flash-attn-2.8.3.tar.gz", "rename it to flash_attn-2.8.3.tar.gz"},
        {"zope.interface-7.0.tar.gz", "rename it to zope_interface-7.0.tar.gz"},
        {"foo-1.0-post1.tar.gz", "rename it to foo-1.0.post1.tar.gz"},
        {"demo-v1.0.tar.gz", "rename it to demo-1.0.tar.gz"},
        {"demo-1.0.0-RC1.tar.gz", "rename it to demo-1.0.0rc1.tar.gz"},
        {"demo-1.0.zip", "rebuild it as a .tar.gz"},
        {"demo-1.0.tar.bz2", "rebuild it as a .tar.gz"},
        {"demo-1.0.tgz", "rebuild it as a .tar.gz"},
        {"demo-1.0.TAR.GZ", "must be '.tar.gz' in lower case"},
        {"demo.tar.gz", "name it {name}-{version}.tar.gz"},
        {"-1.0.tar.gz", "name it {name}-{version}.tar.gz"},
        {"demo-.tar.gz", "name it {name}-{version}.tar.gz"},
        {"demo-notaversion.tar.gz", "name it {name}-{version}.tar.gz"},
        {"../demo-1.0.tar.gz", "path separator '/'"},
        {"dir\\demo-1.0.tar.gz", "path separator"},
        {"demo 1-1.0.tar.gz", "a space at position 5"},
        {"d\xc3\xa9mo-1.0.tar.gz", "non-ASCII"},
        {std::string("demo\x01-1.0.tar.gz"), "control character"},
        {std::string(250, 'a') + "-1.0.tar.gz", "bytes long; at most 255"},
        {"", "empty sdist filename"},
    };
    for (const auto& expected : table) {
        CAPTURE(expected.filename);
        auto parsed = parse_sdist_filename(expected.filename);
        REQUIRE_FALSE(parsed);
        CHECK(parsed.error().kind == wheelhouse::error_kind::invalid);
        CHECK_THAT(std::string(reason_of(parsed.error())), Catch::Contains(expected.reason));
        CHECK(reason_of(parsed.error()).size() <= wheelhouse::reason_budget);
    }
}

TEST_CASE("pep625: a long legacy name gives the name to use in the detail", "[pep625]") {
    const std::string name(200, 'A');
    auto parsed = parse_sdist_filename(name + "-1.0.tar.gz");
    REQUIRE_FALSE(parsed);
    CHECK(reason_of(parsed.error()).size() <= wheelhouse::reason_budget);
    CHECK_THAT(parsed.error().message, Catch::Contains("the name to use is " + std::string(200, 'a') + "-1.0.tar.gz"));
}

TEST_CASE("pep625: a legacy name whose PEP 625 spelling is too long is refused as such", "[pep625]") {
    // Normalising lengthens "1r" to "1.post0": the name to use would be past 255 bytes.
    const std::string name = std::string(245, 'a') + "-1r.tar.gz";
    REQUIRE(name.size() == 255);
    auto parsed = parse_sdist_filename(name);
    REQUIRE_FALSE(parsed);
    CHECK_THAT(std::string(reason_of(parsed.error())), Catch::StartsWith("sdist filename: shorten the name or version"));
    CHECK_THAT(parsed.error().message, Catch::Contains("the PEP 625 spelling is " + std::string(245, 'a') + "-1.post0.tar.gz"));
}

TEST_CASE("pep625: which names are judged as sdists", "[pep625]") {
    CHECK(looks_like_sdist("demo-1.0.tar.gz"));
    CHECK(looks_like_sdist("demo-1.0.ZIP"));
    CHECK(looks_like_sdist("demo-1.0.tgz"));
    CHECK_FALSE(looks_like_sdist("demo-1.0-py3-none-any.whl"));
    CHECK_FALSE(looks_like_sdist("demo-1.0.gz"));
    CHECK_FALSE(looks_like_sdist(""));
}
