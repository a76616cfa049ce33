// Issue 16: every selector the variants API offers for a build is one the index answers with that
// build. Over every label in tests/data (each wheel filename's local label and build tag, each
// version's local label, in every table there): decode -> candidate selectors -> canonical
// spelling -> parse reads back the same selector, and its variant index lists the build, alone
// and among the other builds of its project in the tables. fuzz/variants_selector_fuzz.cpp checks
// the same round trip on the labels it makes up.

#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "file_records.hpp"
#include "tsv_table.hpp"
#include "wheelhouse/pep427/wheel_filename.hpp"
#include "wheelhouse/pep440/version.hpp"
#include "wheelhouse/catalog/variant_view.hpp"

using namespace wheelhouse;

namespace {

struct labels_in_data {
    std::map<std::string, std::vector<catalog::file_record>> wheels_by_project;
    std::vector<std::string> version_labels;  // local labels of versions that are no wheel names
};

labels_in_data every_label() {
    labels_in_data out;
    for (const auto& entry : std::filesystem::directory_iterator(WHEELHOUSE_TEST_DATA_DIR)) {
        if (entry.path().extension() != ".tsv") continue;
        const testing::tsv_table table(entry.path().filename().string());
        for (const auto& row : table.rows()) {
            for (const auto& field : row.fields) {
                if (field.ends_with(".whl")) {
                    if (!pep427::parse_wheel_filename(field)) continue;  // the tables of refusals
                    auto file = testing::file_record_for(field);
                    auto& project = out.wheels_by_project[file.project];
                    const bool seen = std::any_of(project.begin(), project.end(),
                                                  [&](const auto& other) { return other.filename == field; });
                    if (!seen) project.push_back(std::move(file));
                } else if (auto version = pep440::parse(field); version && !version->local.empty()) {
                    out.version_labels.push_back(version->local_string());
                }
            }
        }
    }
    return out;
}

catalog::file_record lone_build(const variants::build_variant& variant) {
    catalog::file_record file;
    file.filename = "lone-1-py3-none-any.whl";
    file.normalized_version = "1";
    file.variant = variant;
    return file;
}

// Each candidate selector of `variant` reads back as itself and lists the build on its own.
std::size_t check_candidates(const variants::build_variant& variant, const std::string& where) {
    const auto lone = lone_build(variant);
    const auto candidates = catalog::candidate_selectors(variant);
    CHECK(candidates.empty() == !variants::speaks_to_machine(variant));
    for (const auto& candidate : candidates) {
        const auto name = candidate.canonical();
        CAPTURE(where, name);
        const auto again = variants::parse_selector(name);
        REQUIRE(again);
        CHECK(again->constraints == candidate.constraints);
        CHECK(again->canonical() == name);
        CHECK(catalog::listed_files(std::span(&lone, 1), *again) == std::vector<std::size_t>{0});
    }
    return candidates.size();
}

}  // namespace

TEST_CASE("variants: every label in tests/data round-trips through the selectors offered for it",
          "[variants][selector][round_trip]") {
    const auto data = every_label();
    std::size_t wheels = 0, offered = 0;
    for (const auto& [project, files] : data.wheels_by_project) {
        const auto reaching = catalog::reaching_selectors(files);
        for (std::size_t index = 0; index < files.size(); ++index) {
            ++wheels;
            offered += check_candidates(files[index].variant, files[index].filename);
            // What the API lists, among the project's other builds: each one answers with it.
            for (const auto& name : reaching[index]) {
                CAPTURE(files[index].filename, name);
                const auto again = variants::parse_selector(name);
                REQUIRE(again);
                const auto listed = catalog::listed_files(files, *again);
                CHECK(std::binary_search(listed.begin(), listed.end(), index));
            }
        }
    }
    for (const auto& label : data.version_labels) offered += check_candidates(variants::decode_local_label(label), label);
    // The tables hold hundreds of real names: a reader that found none must not pass.
    CHECK(wheels >= 200);
    CHECK(data.version_labels.size() >= 20);
    CHECK(offered >= 500);
}

TEST_CASE("variants: the labels of issue 16 item 8 offer no selector that reads otherwise",
          "[variants][selector][round_trip]") {
    for (const char* label : {"cu92", "cu80", "cu321", "cuda12.10", "cu10.12", "cu18.90", "rocm21.a", "torch0.123",
                              "cu92torch1.4", "cu80sm52torch1.0", "cu321sm89torch2.10"}) {
        check_candidates(variants::decode_local_label(label), label);
    }
}
