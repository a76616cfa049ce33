#include <catch2/catch.hpp>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "tsv_table.hpp"
#include "wheelhouse/pep440/version.hpp"

using wheelhouse::pep440::compare;
using wheelhouse::pep440::local_part;
using wheelhouse::pep440::parse;
using wheelhouse::pep440::pre_kind;
using wheelhouse::pep440::version;
using wheelhouse::testing::tsv_table;

namespace {

version parsed(const std::string& text) {
    auto result = parse(text);
    INFO("parsing '" << text << "'");
    REQUIRE(result.has_value());
    return std::move(result).value();
}

const char* name_of(std::weak_ordering order) {
    return order < 0 ? "<" : order > 0 ? ">" : "==";
}

}  // namespace

TEST_CASE("pep440: every spelling in the table normalises as packaging does", "[pep440]") {
    const tsv_table table("version_normalizations.tsv");
    REQUIRE(table.rows().size() >= 100);
    const auto input = table.column("input");
    const auto normalized = table.column("normalized");
    const auto public_part = table.column("public");
    const auto local = table.column("local");
    for (const auto& row : table.rows()) {
        CAPTURE(row.line, row.fields[input]);
        const version v = parsed(row.fields[input]);
        CHECK(v.to_string() == row.fields[normalized]);
        CHECK(v.public_string() == row.fields[public_part]);
        CHECK(v.local_string() == row.fields[local]);
        // The normalised form is a fixed point that names the same version.
        const version again = parsed(v.to_string());
        CHECK(again.to_string() == v.to_string());
        CHECK(std::is_eq(compare(again, v)));
    }
}

TEST_CASE("pep440: the parsed fields of a version", "[pep440]") {
    const version all = parsed(" V1!2.0.3RC4-post5_DEV6+Cu130-sm89_007 ");
    CHECK(all.epoch == 1);
    CHECK(all.release == std::vector<std::uint64_t>{2, 0, 3});
    REQUIRE(all.pre.has_value());
    CHECK(all.pre->kind == pre_kind::release_candidate);
    CHECK(all.pre->number == 4);
    CHECK(all.post == std::optional<std::uint64_t>{5});
    CHECK(all.dev == std::optional<std::uint64_t>{6});
    CHECK(all.local == std::vector<local_part>{std::string("cu130"), std::string("sm89"), std::uint64_t{7}});
    CHECK(all.is_prerelease());

    const version plain = parsed("2.8.3");
    CHECK(plain.epoch == 0);
    CHECK_FALSE(plain.pre.has_value());
    CHECK_FALSE(plain.post.has_value());
    CHECK_FALSE(plain.dev.has_value());
    CHECK(plain.local.empty());
    CHECK_FALSE(plain.is_prerelease());

    CHECK(parsed("1.0.dev0").is_prerelease());
    CHECK(parsed("1.0b1").is_prerelease());
    CHECK_FALSE(parsed("1.0.post1").is_prerelease());
    CHECK_FALSE(parsed("1.0+cu128").is_prerelease());
    CHECK(parsed("1.0a").pre == wheelhouse::pep440::pre_release{pre_kind::alpha, 0});
    CHECK(parsed("1.0-7").post == std::optional<std::uint64_t>{7});
    CHECK(parsed("18446744073709551615.0").release.front() == 18446744073709551615ULL);
}

TEST_CASE("pep440: ordering facts hold in both directions", "[pep440]") {
    const tsv_table table("version_ordering.tsv");
    REQUIRE(table.rows().size() >= 80);
    const auto left = table.column("left");
    const auto relation = table.column("relation");
    const auto right = table.column("right");
    for (const auto& row : table.rows()) {
        CAPTURE(row.line, row.fields[left], row.fields[relation], row.fields[right]);
        const version a = parsed(row.fields[left]);
        const version b = parsed(row.fields[right]);
        const std::string& expected = row.fields[relation];
        REQUIRE((expected == "<" || expected == "==" || expected == ">"));
        CHECK(name_of(compare(a, b)) == expected);
        const std::string reversed = expected == "<" ? ">" : expected == ">" ? "<" : "==";
        CHECK(name_of(compare(b, a)) == reversed);
        CHECK((a == b) == (expected == "=="));
        CHECK((a < b) == (expected == "<"));
    }
}

TEST_CASE("pep440: every pair in the ordered list compares as its ranks do", "[pep440]") {
    const tsv_table table("version_order.tsv");
    const auto rank_column = table.column("rank");
    const auto text_column = table.column("version");
    std::vector<std::pair<int, version>> ranked;
    for (const auto& row : table.rows()) {
        ranked.emplace_back(std::stoi(row.fields[rank_column]), parsed(row.fields[text_column]));
    }
    REQUIRE(ranked.size() >= 150);
    std::size_t wrong = 0;
    for (const auto& [rank_a, a] : ranked) {
        for (const auto& [rank_b, b] : ranked) {
            if (name_of(compare(a, b)) != std::string(name_of(rank_a <=> rank_b))) {
                ++wrong;
                UNSCOPED_INFO(a.to_string() << " vs " << b.to_string() << ": got " << name_of(compare(a, b)));
            }
        }
    }
    CHECK(wrong == 0);
}

TEST_CASE("pep440: std::sort with compare yields the order of the ranks", "[pep440]") {
    const tsv_table table("version_order.tsv");
    std::vector<std::pair<int, version>> ranked;
    for (const auto& row : table.rows()) {
        ranked.emplace_back(std::stoi(row.fields[table.column("rank")]), parsed(row.fields[table.column("version")]));
    }
    std::mt19937 shuffle_source(440);
    for (int round = 0; round < 5; ++round) {
        std::shuffle(ranked.begin(), ranked.end(), shuffle_source);
        std::sort(ranked.begin(), ranked.end(), [](const auto& a, const auto& b) { return a.second < b.second; });
        CHECK(std::is_sorted(ranked.begin(), ranked.end(), [](const auto& a, const auto& b) { return a.first < b.first; }));
    }
}

TEST_CASE("pep440: invalid versions are refused with the wrong part named", "[pep440]") {
    const tsv_table table("invalid_versions.tsv");
    REQUIRE(table.rows().size() >= 50);
    const auto input = table.column("input");
    const auto reason = table.column("reason");
    for (const auto& row : table.rows()) {
        CAPTURE(row.line, row.fields[input]);
        const auto result = parse(row.fields[input]);
        REQUIRE_FALSE(result.has_value());
        CHECK(result.error().kind == wheelhouse::error_kind::invalid);
        CHECK_THAT(result.error().message, Catch::Contains(row.fields[reason]));
        CHECK_THAT(result.error().message, Catch::StartsWith("version '"));
        // The input is echoed escaped: no control byte reaches a log line.
        CHECK(std::none_of(result.error().message.begin(), result.error().message.end(),
                           [](char c) { return static_cast<unsigned char>(c) < 0x20 || c == 0x7f; }));
    }
}

TEST_CASE("pep440: a long invalid input is cut short in the message", "[pep440]") {
    const std::string input = "1.0" + std::string(5000, 'x');
    const auto result = parse(input);
    REQUIRE_FALSE(result.has_value());
    CHECK(result.error().message.size() < 400);
    CHECK_THAT(result.error().message, Catch::Contains("..."));
}
