#include <catch2/catch.hpp>

#include <algorithm>
#include <string>

#include "tsv_table.hpp"
#include "wheelhouse/pep508/marker.hpp"
#include "wheelhouse/pep508/requirement.hpp"

using namespace wheelhouse;
using namespace wheelhouse::pep508;
using wheelhouse::testing::tsv_table;

namespace {

requirement parsed(const std::string& text) {
    auto result = parse_requirement(text);
    INFO("parsing '" << text << "': " << (result ? std::string() : result.error().message));
    REQUIRE(result.has_value());
    return std::move(result).value();
}

marker leaf(std::string variable, std::string op, std::string value) {
    marker out;
    out.leaf = marker_comparison{{true, std::move(variable)}, std::move(op), {false, std::move(value)}};
    return out;
}

}  // namespace

TEST_CASE("pep508: every requirement in the table prints its canonical form, a fixed point", "[pep508]") {
    const tsv_table table("requirements.tsv");
    REQUIRE(table.rows().size() >= 150);
    const auto input = table.column("input");
    const auto canonical = table.column("canonical");
    for (const auto& row : table.rows()) {
        CAPTURE(row.line, row.fields[input]);
        const auto requirement = parsed(row.fields[input]);
        CHECK(requirement.to_string() == row.fields[canonical]);
        CHECK(parsed(requirement.to_string()).to_string() == requirement.to_string());
    }
}

TEST_CASE("pep508: refused requirements name what is wrong", "[pep508]") {
    const tsv_table table("invalid_requirements.tsv");
    REQUIRE(table.rows().size() >= 50);
    const auto input = table.column("input");
    const auto reason = table.column("reason");
    for (const auto& row : table.rows()) {
        CAPTURE(row.line, row.fields[input]);
        const auto result = parse_requirement(row.fields[input]);
        REQUIRE_FALSE(result.has_value());
        CHECK(result.error().kind == error_kind::invalid);
        CHECK_THAT(result.error().message, Catch::Contains(row.fields[reason]));
        CHECK_THAT(result.error().message, Catch::StartsWith("requirement '"));
        CHECK(std::none_of(result.error().message.begin(), result.error().message.end(),
                           [](char c) { return static_cast<unsigned char>(c) < 0x20 || c == 0x7f; }));
    }
}

TEST_CASE("pep508: a refusal echoes a tab in a specifier escaped", "[pep508]") {
    // Found by fuzz/pep508_requirement_fuzz (regressions/): the suggested spelling of '=\t...'
    // carried the tab into the message.
    const auto refused = parse_requirement("o2o=\t.>Po2o=\t.0");
    REQUIRE_FALSE(refused);
    CHECK_THAT(refused.error().message, Catch::Contains("write '==.>Po2o=\\x09.0'"));
    CHECK(refused.error().message.find('\t') == std::string::npos);
}

TEST_CASE("pep508: the parts of a requirement, as written", "[pep508]") {
    const auto with_everything = parsed("Flash_Attn [ CUDA , dev ] ( >=2.8 , <3 ) ; sys.platform == 'linux'");
    CHECK(with_everything.name == "Flash_Attn");
    CHECK(with_everything.extras == std::vector<std::string>{"CUDA", "dev"});
    REQUIRE(with_everything.specifiers.clauses.size() == 2);
    CHECK(with_everything.specifiers.clauses[0].to_string() == ">=2.8");
    CHECK_FALSE(with_everything.url);
    REQUIRE(with_everything.marker);
    CHECK(*with_everything.marker == leaf("sys_platform", "==", "linux"));

    const auto with_url = parsed("kernels @ https://example.org/kernels-1.0-py3-none-any.whl");
    CHECK(with_url.url == std::optional<std::string>("https://example.org/kernels-1.0-py3-none-any.whl"));
    CHECK(with_url.specifiers.empty());
    CHECK_FALSE(with_url.marker);
}

TEST_CASE("pep508: 'and' binds tighter than 'or', and parentheses group", "[pep508]") {
    const auto loose = parse_marker("os_name == 'a' or os_name == 'b' and os_name == 'c'");
    REQUIRE(loose);
    REQUIRE(loose->what == marker::kind::any_of);
    REQUIRE(loose->operands.size() == 2);
    CHECK(loose->operands[0] == leaf("os_name", "==", "a"));
    CHECK(loose->operands[1].what == marker::kind::all_of);

    const auto grouped = parse_marker("(os_name == 'a' or os_name == 'b') and os_name == 'c'");
    REQUIRE(grouped);
    REQUIRE(grouped->what == marker::kind::all_of);
    CHECK(grouped->operands[0].what == marker::kind::any_of);
    CHECK(grouped->to_string() == "(os_name == \"a\" or os_name == \"b\") and os_name == \"c\"");

    const auto flat = parse_marker("os_name == 'a' and (os_name == 'b' and (os_name == 'c'))");
    REQUIRE(flat);
    CHECK(flat->what == marker::kind::all_of);
    CHECK(flat->operands.size() == 3);
}

TEST_CASE("pep508: markers read every PEP 508 variable and packaging's older spellings", "[pep508]") {
    const std::pair<const char*, const char*> names[] = {
        {"python_version", "python_version"},
        {"python_full_version", "python_full_version"},
        {"os_name", "os_name"},
        {"os.name", "os_name"},
        {"sys_platform", "sys_platform"},
        {"sys.platform", "sys_platform"},
        {"platform_release", "platform_release"},
        {"platform_system", "platform_system"},
        {"platform_version", "platform_version"},
        {"platform.version", "platform_version"},
        {"platform_machine", "platform_machine"},
        {"platform.machine", "platform_machine"},
        {"platform_python_implementation", "platform_python_implementation"},
        {"platform.python_implementation", "platform_python_implementation"},
        {"python_implementation", "platform_python_implementation"},
        {"implementation_name", "implementation_name"},
        {"implementation_version", "implementation_version"},
        {"extra", "extra"},
    };
    for (const auto& [written, canonical] : names) {
        CAPTURE(written);
        const auto parsed_marker = parse_marker(std::string(written) + " != 'x'");
        REQUIRE(parsed_marker);
        CHECK(parsed_marker->leaf.left == marker_operand{true, canonical});
    }
    for (const char* unknown : {"python", "platform", "os_namex", "Python_Version", "sys_platform2", "env"}) {
        CAPTURE(unknown);
        const auto refused = parse_marker(std::string(unknown) + " == 'x'");
        REQUIRE_FALSE(refused);
        CHECK_THAT(refused.error().message, Catch::Contains("unknown marker variable"));
    }
}

TEST_CASE("pep508: parentheses nest at most 32 deep, so a line of '(' cannot exhaust the stack", "[pep508]") {
    // fuzz/pep508_requirement_fuzz found 2,000 '(' overflowing the stack of the recursive parser.
    auto nested = [](int depth) {
        return std::string(static_cast<std::size_t>(depth), '(') + "python_version >= \"3.9\"" +
               std::string(static_cast<std::size_t>(depth), ')');
    };
    auto deepest = parse_marker(nested(32));
    REQUIRE(deepest.has_value());
    CHECK(deepest->to_string() == "python_version >= \"3.9\"");
    CHECK(parse_requirement("torch; " + nested(32)).has_value());

    for (const std::string& text : {nested(33), std::string(100000, '(')}) {
        auto refused = parse_marker(text);
        REQUIRE_FALSE(refused.has_value());
        CHECK_THAT(refused.error().message, Catch::Contains("parentheses nest more than 32 deep"));
        CHECK_FALSE(parse_requirement("torch; " + text).has_value());
    }
}
