#include <catch2/catch.hpp>

#include <string>
#include <string_view>
#include <vector>

#include <boost/json.hpp>

#include "tsv_table.hpp"
#include "wheelhouse/error_text.hpp"
#include "wheelhouse/inspect/filename_report.hpp"
#include "wheelhouse/pep427/wheel_filename.hpp"
#include "wheelhouse/text/utf8.hpp"

namespace json = boost::json;
using wheelhouse::inspect::describe;
using wheelhouse::inspect::report;
using wheelhouse::testing::tsv_table;

namespace {

std::vector<std::string> keys_of(const json::object& object) {
    std::vector<std::string> keys;
    for (const auto& member : object) keys.emplace_back(member.key());
    return keys;
}

// A string member as std::string, which json::value does not compare with.
std::string text_of(const json::object& object, std::string_view key) {
    return std::string(object.at(key).as_string());
}

std::string joined(const json::value& tags) {
    std::string out;
    for (const auto& tag : tags.as_array()) {
        if (!out.empty()) out += '.';
        out += tag.as_string();
    }
    return out;
}

const std::vector<std::string> described_keys = {
    "filename", "name", "normalized_name", "version", "normalized_version", "public_version", "local",
    "build", "python_tags", "abi_tags", "platform_tags", "variant", "variant_label"};

}  // namespace

TEST_CASE("inspect: every valid filename of the table is reported with the table's fields", "[inspect]") {
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
        const auto result = report(given);
        REQUIRE(result.valid);
        const auto& fields = result.json;
        CHECK(keys_of(fields) == described_keys);
        CHECK(text_of(fields, "filename") == given);
        CHECK(text_of(fields, "normalized_name") == row.fields[normalized_name]);
        CHECK(text_of(fields, "normalized_version") == row.fields[normalized_version]);
        // The name and version as written are the filename's first two parts.
        CHECK(given.starts_with(std::string(fields.at("name").as_string()) + "-" +
                                std::string(fields.at("version").as_string()) + "-"));
        const auto& local = fields.at("local");
        const std::string public_version(fields.at("public_version").as_string());
        CHECK(row.fields[normalized_version] ==
              (local.is_null() ? public_version : public_version + "+" + std::string(local.as_string())));
        if (row.fields[build_number].empty()) {
            CHECK(fields.at("build").is_null());
        } else {
            const auto& build = fields.at("build").as_object();
            CHECK(std::to_string(build.at("number").to_number<std::uint64_t>()) == row.fields[build_number]);
            CHECK(text_of(build, "suffix") == row.fields[build_suffix]);
            CHECK(text_of(build, "text") == row.fields[build_number] + row.fields[build_suffix]);
        }
        CHECK(joined(fields.at("python_tags")) == row.fields[python_tags]);
        CHECK(joined(fields.at("abi_tags")) == row.fields[abi_tags]);
        CHECK(joined(fields.at("platform_tags")) == row.fields[platform_tags]);
        CHECK(fields.at("variant").is_object());
    }
}

TEST_CASE("inspect: every refused filename of the table is reported with the parser's message", "[inspect]") {
    const tsv_table table("invalid_wheel_filenames.tsv");
    REQUIRE(table.rows().size() >= 50);
    const auto filename = table.column("filename");
    const auto reason = table.column("reason");
    std::size_t checked = 0;
    for (const auto& row : table.rows()) {
        const std::string& given = row.fields[filename];
        if (given.find('/') != std::string::npos) continue;  // a path: see the test below
        CAPTURE(row.line, given);
        const auto result = report(given);
        CHECK_FALSE(result.valid);
        CHECK(keys_of(result.json) == std::vector<std::string>{"filename", "error"});
        const auto parsed = wheelhouse::pep427::parse_wheel_filename(given);
        REQUIRE_FALSE(parsed.has_value());
        // What an upload of the same name is refused with, on one line, made safe for JSON.
        const std::string message(result.json.at("error").as_string());
        CHECK(message == wheelhouse::text::replace_invalid_utf8(wheelhouse::describe(parsed.error())));
        CHECK_THAT(message, Catch::Contains(row.fields[reason]));
        CHECK(text_of(result.json, "filename") == wheelhouse::text::replace_invalid_utf8(given));
        ++checked;
    }
    CHECK(checked >= 50);
}

TEST_CASE("inspect: a name with '/' is a path whose last part is checked", "[inspect]") {
    struct example {
        const char* argument;
        const char* filename;  // reported as "filename"
        bool valid;
        const char* phrase;    // in the error, when refused
    };
    const example examples[] = {
        {"dist/flash_attn-2.8.3+cu128torch2.8-cp312-cp312-linux_x86_64.whl",
         "flash_attn-2.8.3+cu128torch2.8-cp312-cp312-linux_x86_64.whl", true, ""},
        {"/home/runner/work/dist/six-1.16.0-py2.py3-none-any.whl", "six-1.16.0-py2.py3-none-any.whl", true, ""},
        {"./demo-1.0-py3-none-any.whl", "demo-1.0-py3-none-any.whl", true, ""},
        // Only the name is checked: where the file lies is the caller's business.
        {"../../etc/demo-1.0-py3-none-any.whl", "demo-1.0-py3-none-any.whl", true, ""},
        {"dist/flash-attn-2.8.3-cp312-cp312-linux_x86_64.whl", "flash-attn-2.8.3-cp312-cp312-linux_x86_64.whl", false,
         "write it as 'flash_attn'"},
        {"demo-1.0-py3-none-linux/x86_64.whl", "x86_64.whl", false, "found 1 '-'-separated part"},
        {"dist/", "", false, "ends in '/': give a wheel file, not a directory"},
        {"/", "", false, "ends in '/'"},
        {"dist/.whl", ".whl", false, "found 1 '-'-separated part"},
    };
    for (const auto& [argument, filename, valid, phrase] : examples) {
        CAPTURE(argument);
        const auto result = report(argument);
        CHECK(result.valid == valid);
        CHECK(text_of(result.json, "filename") == filename);
        CHECK(text_of(result.json, "path") == argument);
        auto keys = keys_of(result.json);
        REQUIRE(keys.size() >= 3);
        CHECK(keys[1] == "path");  // right after the filename it names
        if (valid) {
            keys.erase(keys.begin() + 1);
            CHECK(keys == described_keys);
        } else {
            CHECK(keys == std::vector<std::string>{"filename", "path", "error"});
            CHECK_THAT(std::string(result.json.at("error").as_string()), Catch::Contains(phrase));
        }
    }
    // A backslash is no path separator here; the filename check refuses it.
    const auto windows = report("dist\\demo-1.0-py3-none-any.whl");
    CHECK_FALSE(windows.valid);
    CHECK_FALSE(windows.json.contains("path"));
    CHECK_THAT(std::string(windows.json.at("error").as_string()), Catch::Contains("path separator"));
}

TEST_CASE("inspect: the JSON of a CUDA build, spelled out", "[inspect]") {
    const auto flash_attn = report("flash_attn-2.8.3+cu128torch2.8-cp312-cp312-linux_x86_64.whl");
    REQUIRE(flash_attn.valid);
    CHECK(json::serialize(flash_attn.json) ==
          R"({"filename":"flash_attn-2.8.3+cu128torch2.8-cp312-cp312-linux_x86_64.whl","name":"flash_attn",)"
          R"("normalized_name":"flash-attn","version":"2.8.3+cu128torch2.8","normalized_version":"2.8.3+cu128torch2.8",)"
          R"("public_version":"2.8.3","local":"cu128torch2.8","build":null,"python_tags":["cp312"],"abi_tags":["cp312"],)"
          R"("platform_tags":["linux_x86_64"],"variant":{"cuda":"12.8","torch":"2.8"},"variant_label":null})");

    // SageAttention names torch 2.8.0 and CUDA 12.9 in its build tag.
    const auto sage = report("sageattention-2.2.0-280.129-cp312-cp312-linux_x86_64.whl");
    REQUIRE(sage.valid);
    CHECK(sage.json.at("local").is_null());
    CHECK(sage.json.at("build") == json::parse(R"({"number":280,"suffix":".129","text":"280.129"})"));
    CHECK(sage.json.at("variant") == json::parse(R"({"cuda":"12.9","torch":"2.8.0"})"));

    const auto six = report("six-1.16.0-py2.py3-none-any.whl");
    REQUIRE(six.valid);
    CHECK(six.json.at("python_tags") == json::parse(R"(["py2","py3"])"));
    CHECK(six.json.at("variant").as_object().empty());
}

TEST_CASE("inspect: the version as written beside its normalised parts", "[inspect]") {
    const auto result = report("Demo.Pkg-1.0RC1.post0+CU128_Torch2.8-py3-none-Win_AMD64.whl");
    REQUIRE(result.valid);
    CHECK(text_of(result.json, "name") == "Demo.Pkg");
    CHECK(text_of(result.json, "normalized_name") == "demo-pkg");
    CHECK(text_of(result.json, "version") == "1.0RC1.post0+CU128_Torch2.8");
    CHECK(text_of(result.json, "normalized_version") == "1.0rc1.post0+cu128.torch2.8");
    CHECK(text_of(result.json, "public_version") == "1.0rc1.post0");
    CHECK(text_of(result.json, "local") == "cu128.torch2.8");
    CHECK(result.json.at("platform_tags") == json::parse(R"(["win_amd64"])"));

    // The same object whether it comes from a parsed filename or from the argument.
    const auto parsed = wheelhouse::pep427::parse_wheel_filename("Demo.Pkg-1.0RC1.post0+CU128_Torch2.8-py3-none-Win_AMD64.whl");
    REQUIRE(parsed.has_value());
    CHECK(describe(*parsed) == result.json);
}

TEST_CASE("inspect: a name that is not UTF-8 still gives valid JSON", "[inspect]") {
    const auto result = report("d\xE9mo-1.0-py3-none-any.whl");  // Latin-1 'é'
    CHECK_FALSE(result.valid);
    CHECK(text_of(result.json, "filename") == "d\xEF\xBF\xBDmo-1.0-py3-none-any.whl");
    CHECK_THAT(std::string(result.json.at("error").as_string()), Catch::Contains("non-ASCII byte 0xE9"));
    const auto text = json::serialize(result.json);
    CHECK(wheelhouse::text::replace_invalid_utf8(text) == text);
    CHECK(json::parse(text) == result.json);

    const auto path = report("dist\xFF/x.whl");
    CHECK(text_of(path.json, "path") == "dist\xEF\xBF\xBD/x.whl");
}
