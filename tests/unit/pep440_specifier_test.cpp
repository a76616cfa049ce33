#include <catch2/catch.hpp>

#include <algorithm>
#include <string>

#include "tsv_table.hpp"
#include "wheelhouse/pep440/specifier.hpp"

using namespace wheelhouse;
using namespace wheelhouse::pep440;
using wheelhouse::testing::tsv_table;

namespace {

specifier_set parsed_set(const std::string& text) {
    auto result = parse_specifier_set(text);
    INFO("parsing '" << text << "': " << (result ? std::string() : result.error().message));
    REQUIRE(result.has_value());
    return std::move(result).value();
}

version parsed_version(const std::string& text) {
    auto result = parse(text);
    INFO("parsing version '" << text << "'");
    REQUIRE(result.has_value());
    return std::move(result).value();
}

bool no_control_bytes(const std::string& text) {
    return std::none_of(text.begin(), text.end(), [](char c) { return static_cast<unsigned char>(c) < 0x20 || c == 0x7f; });
}

}  // namespace

TEST_CASE("pep440 specifiers: every set in the table prints its canonical form, a fixed point", "[pep440]") {
    const tsv_table table("specifier_sets.tsv");
    REQUIRE(table.rows().size() >= 50);
    const auto input = table.column("input");
    const auto canonical = table.column("canonical");
    for (const auto& row : table.rows()) {
        CAPTURE(row.line, row.fields[input]);
        const auto set = parsed_set(row.fields[input]);
        CHECK(set.to_string() == row.fields[canonical]);
        CHECK(parsed_set(set.to_string()).to_string() == set.to_string());
    }
}

TEST_CASE("pep440 specifiers: refused sets name what is wrong", "[pep440]") {
    const tsv_table table("invalid_specifier_sets.tsv");
    REQUIRE(table.rows().size() >= 40);
    const auto input = table.column("input");
    const auto reason = table.column("reason");
    for (const auto& row : table.rows()) {
        CAPTURE(row.line, row.fields[input]);
        const auto result = parse_specifier_set(row.fields[input]);
        REQUIRE_FALSE(result.has_value());
        CHECK(result.error().kind == error_kind::invalid);
        CHECK_THAT(result.error().message, Catch::Contains(row.fields[reason]));
        CHECK_THAT(result.error().message, Catch::StartsWith("version specifier '"));
        CHECK(no_control_bytes(result.error().message));
    }
}

TEST_CASE("pep440 specifiers: contains answers as the table says", "[pep440]") {
    const tsv_table table("specifier_contains.tsv");
    REQUIRE(table.rows().size() >= 100);
    const auto specifier = table.column("specifier");
    const auto candidate = table.column("version");
    const auto prereleases = table.column("prereleases");
    const auto contained = table.column("contained");
    for (const auto& row : table.rows()) {
        CAPTURE(row.line, row.fields[specifier], row.fields[candidate], row.fields[prereleases]);
        const auto set = parsed_set(row.fields[specifier]);
        std::optional<bool> admit;
        if (!row.fields[prereleases].empty()) admit = row.fields[prereleases] == "true";
        REQUIRE((row.fields[contained] == "yes" || row.fields[contained] == "no"));
        CHECK(set.contains(parsed_version(row.fields[candidate]), admit) == (row.fields[contained] == "yes"));
    }
}

TEST_CASE("pep440 specifiers: the parts of one clause", "[pep440]") {
    const auto prefix = parse_specifier(" == v1!2.8.* ");
    REQUIRE(prefix);
    CHECK(prefix->op == comparison::equal);
    CHECK(prefix->prefix_match);
    CHECK(prefix->written == "v1!2.8.*");
    REQUIRE(prefix->target);
    CHECK(prefix->target->epoch == 1);
    CHECK(prefix->target->release == std::vector<std::uint64_t>{2, 8});
    CHECK(prefix->to_string() == "==1!2.8.*");
    CHECK_FALSE(prefix->admits_prereleases());

    const auto arbitrary = parse_specifier("===Not-A-Version");
    REQUIRE(arbitrary);
    CHECK(arbitrary->op == comparison::arbitrary);
    CHECK_FALSE(arbitrary->target);
    CHECK(arbitrary->to_string() == "===Not-A-Version");

    for (const char* text : {"==1.0rc1", ">=1.0.dev0", "<=1.0a1", "~=1.0b2", "===1.0rc1"}) {
        CAPTURE(text);
        CHECK(parse_specifier(text)->admits_prereleases());
    }
    for (const char* text : {"!=1.0rc1", ">1.0a1", "<1.0a1", "==1.*", ">=1.0", "===foo"}) {
        CAPTURE(text);
        CHECK_FALSE(parse_specifier(text)->admits_prereleases());
    }
}

TEST_CASE("pep440 specifiers: a set keeps its clauses in the order written", "[pep440]") {
    const auto set = parsed_set(" <4 , , >=3.9,!=3.9.1 ");
    REQUIRE(set.clauses.size() == 3);
    CHECK(set.clauses[0].to_string() == "<4");
    CHECK(set.clauses[1].to_string() == ">=3.9");
    CHECK(set.clauses[2].to_string() == "!=3.9.1");
    CHECK(set.to_string() == "!=3.9.1,<4,>=3.9");
    CHECK(parsed_set("").empty());
    CHECK(parsed_set(" , ").empty());
}

TEST_CASE("pep440 specifiers: the error names the clause that is wrong and echoes it safely", "[pep440]") {
    const auto result = parse_specifier_set(">=3.9, <4\n, >=3.8\">\x01<script>");
    REQUIRE_FALSE(result);
    CHECK_THAT(result.error().message, Catch::Contains("'>=3.8\">\\x01<script>'"));
    CHECK(no_control_bytes(result.error().message));

    // Found by fuzz/pep440_specifier_fuzz (regressions/): the suggested spelling echoed the
    // clause unescaped, control and non-ASCII bytes and all.
    for (const std::string& text : {std::string("=!=.6.(= 339\xFF\xFF_\x80\x00\x00\x1C}3+CvU128", 28),
                                   std::string("3.9\x1B[2J"), std::string(">=3.9\x01.*")}) {
        CAPTURE(text);
        const auto refused = parse_specifier_set(text);
        REQUIRE_FALSE(refused);
        CHECK(no_control_bytes(refused.error().message));
    }
    CHECK_THAT(parse_specifier("=\x01").error().message, Catch::Contains("write '==\\x01'"));

    const auto long_one = parse_specifier(">=" + std::string(5000, '9') + "x");
    REQUIRE_FALSE(long_one);
    CHECK(long_one.error().message.size() < 600);
}
