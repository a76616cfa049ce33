#include <catch2/catch.hpp>

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "file_records.hpp"
#include "wheelhouse/render/simple_index.hpp"
#include "wheelhouse/catalog/variant_view.hpp"

using namespace wheelhouse;
using variants::parse_selector;
using testing::file_records_for;

namespace {

std::set<std::string> listed(const std::vector<catalog::file_record>& files, std::string_view selector_text) {
    const auto wanted = parse_selector(selector_text);
    REQUIRE(wanted);
    const auto indices = catalog::listed_files(files, *wanted);
    CHECK(std::is_sorted(indices.begin(), indices.end()));
    std::set<std::string> names;
    for (const auto index : indices) names.insert(files.at(index).filename);
    CHECK(names.size() == indices.size());
    return names;
}

// flash-attn as the issue describes it: several CUDA / torch / GPU builds of one release, the
// upstream cu12 builds with both C++ ABIs, an older release, another Python, a pure wheel.
const std::vector<catalog::file_record>& flash_attn() {
    static const auto files = file_records_for({
        "flash_attn-2.8.3+cu128torch2.8-cp312-cp312-linux_x86_64.whl",
        "flash_attn-2.8.3+cu130torch2.10-cp312-cp312-linux_x86_64.whl",
        "flash_attn-2.8.3+cu130sm89torch2.10.0-cp312-cp312-linux_x86_64.whl",
        "flash_attn-2.8.3+cu130sm120torch2.10.0-cp312-cp312-linux_x86_64.whl",
        "flash_attn-2.8.3+cu12torch2.8cxx11abiTRUE-cp312-cp312-linux_x86_64.whl",
        "flash_attn-2.8.3+cu12torch2.8cxx11abiFALSE-cp312-cp312-linux_x86_64.whl",
        "flash_attn-2.8.3+cu130torch2.10-cp311-cp311-linux_x86_64.whl",
        "flash_attn-2.8.3+cu130torch2.10-cp312-cp312-win_amd64.whl",
        "flash_attn-2.8.2+cu128torch2.8-cp312-cp312-linux_x86_64.whl",
        "flash_attn-2.8.3-py3-none-any.whl",
        "flash_attn-2.8.4.dev0+g1a2b3c4-py3-none-any.whl",
    });
    return files;
}

}  // namespace

TEST_CASE("variant view: one best fit per build slot, pure files always", "[catalog][variant_view]") {
    const std::set<std::string> always = {"flash_attn-2.8.3-py3-none-any.whl",
                                          "flash_attn-2.8.4.dev0+g1a2b3c4-py3-none-any.whl"};
    struct row {
        const char* selector;
        std::set<std::string> expected;  // besides `always`
    };
    const row table[] = {
        {"cu130-torch2.10-sm89",
         {"flash_attn-2.8.3+cu130sm89torch2.10.0-cp312-cp312-linux_x86_64.whl",
          "flash_attn-2.8.3+cu130torch2.10-cp311-cp311-linux_x86_64.whl",
          "flash_attn-2.8.3+cu130torch2.10-cp312-cp312-win_amd64.whl"}},
        {"cu130-torch2.10-sm120",
         {"flash_attn-2.8.3+cu130sm120torch2.10.0-cp312-cp312-linux_x86_64.whl",
          "flash_attn-2.8.3+cu130torch2.10-cp311-cp311-linux_x86_64.whl",
          "flash_attn-2.8.3+cu130torch2.10-cp312-cp312-win_amd64.whl"}},
        // a GPU with no build of its own gets the build for every GPU
        {"cu130-torch2.10-sm90",
         {"flash_attn-2.8.3+cu130torch2.10-cp312-cp312-linux_x86_64.whl",
          "flash_attn-2.8.3+cu130torch2.10-cp311-cp311-linux_x86_64.whl",
          "flash_attn-2.8.3+cu130torch2.10-cp312-cp312-win_amd64.whl"}},
        // and so does whoever does not name a GPU: an sm89 build must not reach an sm120 card
        {"cu130-torch2.10",
         {"flash_attn-2.8.3+cu130torch2.10-cp312-cp312-linux_x86_64.whl",
          "flash_attn-2.8.3+cu130torch2.10-cp311-cp311-linux_x86_64.whl",
          "flash_attn-2.8.3+cu130torch2.10-cp312-cp312-win_amd64.whl"}},
        {"cu130",
         {"flash_attn-2.8.3+cu130torch2.10-cp312-cp312-linux_x86_64.whl",
          "flash_attn-2.8.3+cu130torch2.10-cp311-cp311-linux_x86_64.whl",
          "flash_attn-2.8.3+cu130torch2.10-cp312-cp312-win_amd64.whl"}},
        // cu128 beats the CUDA-12-for-any-minor builds: it names the minor the user asked for
        {"cu128",
         {"flash_attn-2.8.3+cu128torch2.8-cp312-cp312-linux_x86_64.whl",
          "flash_attn-2.8.2+cu128torch2.8-cp312-cp312-linux_x86_64.whl"}},
        {"cu12",
         {"flash_attn-2.8.3+cu128torch2.8-cp312-cp312-linux_x86_64.whl",
          "flash_attn-2.8.2+cu128torch2.8-cp312-cp312-linux_x86_64.whl"}},
        // asked for the ABI: the upstream build that names it wins
        {"cu128-torch2.8-cxx11abi0",
         {"flash_attn-2.8.3+cu12torch2.8cxx11abiFALSE-cp312-cp312-linux_x86_64.whl",
          "flash_attn-2.8.2+cu128torch2.8-cp312-cp312-linux_x86_64.whl"}},
        {"cu126-cxx11abi1",
         {"flash_attn-2.8.3+cu12torch2.8cxx11abiTRUE-cp312-cp312-linux_x86_64.whl"}},
        {"torch2.8",
         {"flash_attn-2.8.3+cu128torch2.8-cp312-cp312-linux_x86_64.whl",
          "flash_attn-2.8.2+cu128torch2.8-cp312-cp312-linux_x86_64.whl"}},
        {"torch2.9", {}},
        {"cu118", {}},
        {"cpu", {}},
        {"rocm6.4", {}},
    };
    for (const auto& [selector_text, expected] : table) {
        CAPTURE(selector_text);
        auto want = expected;
        want.insert(always.begin(), always.end());
        CHECK(listed(flash_attn(), selector_text) == want);
    }
}

TEST_CASE("variant view: ties go to the build pip would take, whatever the input order", "[catalog][variant_view]") {
    // SageAttention's Linux builds carry torch and CUDA in the build tag: {torch}.{cuda}
    auto sage = file_records_for({
        "sageattention-2.2.0-280.128-cp39-abi3-linux_x86_64.whl",
        "sageattention-2.2.0-280.129-cp39-abi3-linux_x86_64.whl",
        "sageattention-2.2.0-290.130-cp39-abi3-linux_x86_64.whl",
        "sageattention-2.2.0-2100.130-cp39-abi3-linux_x86_64.whl",
    });
    for (int turn = 0; turn < 2; ++turn) {
        CAPTURE(turn);
        CHECK(listed(sage, "cu130-torch2.10") == std::set<std::string>{"sageattention-2.2.0-2100.130-cp39-abi3-linux_x86_64.whl"});
        CHECK(listed(sage, "cu130-torch2.9") == std::set<std::string>{"sageattention-2.2.0-290.130-cp39-abi3-linux_x86_64.whl"});
        CHECK(listed(sage, "cu128") == std::set<std::string>{"sageattention-2.2.0-280.128-cp39-abi3-linux_x86_64.whl"});
        // 280.129 and 280.128 fit torch2.8 equally; pip would take the higher build tag
        CHECK(listed(sage, "torch2.8") == std::set<std::string>{"sageattention-2.2.0-280.129-cp39-abi3-linux_x86_64.whl"});
        CHECK(listed(sage, "cu126").empty());
        std::reverse(sage.begin(), sage.end());
    }

    // woct0rdho's Windows builds: a torch lower bound and a post release in the label
    auto windows = file_records_for({
        "sageattention-2.2.0+cu128torch2.8.0andhigher.post3-cp39-abi3-win_amd64.whl",
        "sageattention-2.2.0+cu128torch2.9.0andhigher.post4-cp39-abi3-win_amd64.whl",
        "sageattention-2.2.0+cu130torch2.9.0andhigher.post4-cp39-abi3-win_amd64.whl",
    });
    for (int turn = 0; turn < 2; ++turn) {
        CHECK(listed(windows, "cu128-torch2.8") ==
              std::set<std::string>{"sageattention-2.2.0+cu128torch2.8.0andhigher.post3-cp39-abi3-win_amd64.whl"});
        // both lower bounds fit torch 2.11; equal scores, and PEP 440 puts torch2.9.0 above torch2.8.0
        CHECK(listed(windows, "cu128-torch2.11") ==
              std::set<std::string>{"sageattention-2.2.0+cu128torch2.9.0andhigher.post4-cp39-abi3-win_amd64.whl"});
        CHECK(listed(windows, "cu130-torch2.10") ==
              std::set<std::string>{"sageattention-2.2.0+cu130torch2.9.0andhigher.post4-cp39-abi3-win_amd64.whl"});
        std::reverse(windows.begin(), windows.end());
    }

    // an exact torch build beats a lower bound, though PEP 440 puts the longer label above it
    auto exact_and_bound = file_records_for({
        "sageattention-2.2.0+cu130torch2.11-cp39-abi3-win_amd64.whl",
        "sageattention-2.2.0+cu130torch2.11.0andhigher-cp39-abi3-win_amd64.whl",
    });
    for (int turn = 0; turn < 2; ++turn) {
        CHECK(listed(exact_and_bound, "torch2.11") ==
              std::set<std::string>{"sageattention-2.2.0+cu130torch2.11-cp39-abi3-win_amd64.whl"});
        CHECK(listed(exact_and_bound, "cu130-torch2.12") ==
              std::set<std::string>{"sageattention-2.2.0+cu130torch2.11.0andhigher-cp39-abi3-win_amd64.whl"});
        std::reverse(exact_and_bound.begin(), exact_and_bound.end());
    }

    // rebuilds of one variant under plain build numbers: the later build, as pip would
    const auto rebuilt = file_records_for({
        "nunchaku-1.0.0+torch2.10-1-cp312-cp312-linux_x86_64.whl",
        "nunchaku-1.0.0+torch2.10-2-cp312-cp312-linux_x86_64.whl",
        "nunchaku-1.0.0+torch2.9-2-cp312-cp312-linux_x86_64.whl",
    });
    CHECK(listed(rebuilt, "torch2.10") == std::set<std::string>{"nunchaku-1.0.0+torch2.10-2-cp312-cp312-linux_x86_64.whl"});
    CHECK(listed(rebuilt, "cu130-torch2.9") == std::set<std::string>{"nunchaku-1.0.0+torch2.9-2-cp312-cp312-linux_x86_64.whl"});
}

TEST_CASE("variant view: candidate selectors read back as themselves", "[catalog][variant_view]") {
    struct row {
        const char* label;
        std::vector<std::string> expected;
    };
    const row table[] = {
        // the CUDA major is how a user of the family asks too, after the build's own spelling
        {"cu130sm89torch2.10.0",
         {"cu130-torch2.10-sm89", "cu13-torch2.10-sm89", "cu130-sm89", "cu130-torch2.10", "torch2.10-sm89",
          "cu13-sm89", "cu13-torch2.10", "cu130", "sm89", "torch2.10", "cu13"}},
        {"cu12torch2.8cxx11abiTRUE",
         {"cu12-torch2.8-cxx11abi1", "cu12-cxx11abi1", "cu12-torch2.8", "torch2.8-cxx11abi1", "cu12", "cxx11abi1",
          "torch2.8"}},
        {"torch2.10", {"torch2.10"}},
        {"rocm6.4", {"rocm6.4"}},
        {"cpu", {"cpu"}},
        {"cu130sm80.sm90", {"cu130-sm80", "cu130-sm90", "cu13-sm80", "cu13-sm90", "cu130", "sm80", "sm90", "cu13"}},
        {"torch2.9.0andhigher", {"torch2.9"}},
        {"g1a2b3c4", {}},
        {"", {}},
        // issue 16 item 4: a GPU asks by its compute capability, never by a suffix
        {"cu130sm90atorch2.10", {"cu130-torch2.10-sm90", "cu13-torch2.10-sm90", "cu130-sm90", "cu130-torch2.10",
                                 "torch2.10-sm90", "cu13-sm90", "cu13-torch2.10", "cu130", "sm90", "torch2.10",
                                 "cu13"}},
        {"sm100f", {"sm100", "sm103"}},  // each GPU of the family NVIDIA makes, from 10.0 up
        // issue 16 item 8: no selector that reads as something else, or as nothing
        {"cu92", {"cu92"}},       // not cu9, which no word reads
        {"cu80", {"cu80"}},       // not cu8
        {"cu321", {"cu321"}},     // not cu32, which reads as CUDA 3.2
        {"cuda12.10", {"cu12.10", "cu12"}},
        {"cu10.12", {"cu10.12", "cu10"}},
        {"rocm21.a", {}},         // decodes as nothing of ROCm
        {"torch0.123", {}},       // nor of torch
    };
    for (const auto& [label, expected] : table) {
        CAPTURE(label);
        std::vector<std::string> names;
        for (const auto& candidate : catalog::candidate_selectors(variants::decode_local_label(label))) {
            names.push_back(candidate.canonical());
            const auto reparsed = parse_selector(names.back());
            REQUIRE(reparsed);
            CHECK(reparsed->constraints == candidate.constraints);
        }
        CHECK(names == expected);
    }
}

TEST_CASE("variant view: candidates include the family versions the project names", "[catalog][variant_view]") {
    const catalog::family_versions named{
        {"11.8", "12", "12.6", "12.8", "13.0"}, {"2.7", "2.8", "2.9", "2.10", "2.11"}, {"9.0", "10.0", "10.3", "12.0"}};
    struct row {
        const char* label;
        std::vector<std::string> expected;
    };
    const row table[] = {
        // a build for any CUDA 12 is asked for by whoever has CUDA 12.6 or 12.8
        {"cu12torch2.8",
         {"cu12-torch2.8", "cu126-torch2.8", "cu128-torch2.8", "cu12", "torch2.8", "cu126", "cu128"}},
        // a torch lower bound is asked for by each later torch, never an earlier one
        {"cu130torch2.9.0andhigher",
         {"cu130-torch2.9", "cu13-torch2.9", "cu130-torch2.10", "cu130-torch2.11", "cu13-torch2.10",
          "cu13-torch2.11", "cu130", "torch2.9", "cu13", "torch2.10", "torch2.11"}},
        // an exact build only by its own versions
        {"cu118torch2.7", {"cu118-torch2.7", "cu11-torch2.7", "cu118", "torch2.7", "cu11"}},
        {"rocm6.4torch2.8", {"rocm6.4-torch2.8", "rocm6.4", "torch2.8"}},
        // a family build by each GPU of its family the project names, from its minor up
        {"cu130sm100f", {"cu130-sm100", "cu130-sm103", "cu13-sm100", "cu13-sm103", "cu130", "sm100", "sm103", "cu13"}},
        {"cu130sm103f", {"cu130-sm103", "cu13-sm103", "cu130", "sm103", "cu13"}},
        // an arch-specific build only by its own
        {"cu130sm100a", {"cu130-sm100", "cu13-sm100", "cu130", "sm100", "cu13"}},
    };
    for (const auto& [label, expected] : table) {
        CAPTURE(label);
        std::vector<std::string> names;
        for (const auto& candidate : catalog::candidate_selectors(variants::decode_local_label(label), named)) {
            names.push_back(candidate.canonical());
            const auto reparsed = parse_selector(names.back());
            REQUIRE(reparsed);
            CHECK(reparsed->constraints == candidate.constraints);
        }
        CHECK(names == expected);
    }
}

TEST_CASE("variant view: the selectors that really reach each build", "[catalog][variant_view]") {
    const auto& files = flash_attn();
    const auto reach = catalog::reaching_selectors(files);
    REQUIRE(reach.size() == files.size());
    auto of = [&](std::string_view filename) {
        const auto at = std::find_if(files.begin(), files.end(), [&](const auto& f) { return f.filename == filename; });
        REQUIRE(at != files.end());
        return reach[static_cast<std::size_t>(at - files.begin())];
    };
    // the sm89 build is only what asks for sm89: without it, the build for every GPU wins
    CHECK(of("flash_attn-2.8.3+cu130sm89torch2.10.0-cp312-cp312-linux_x86_64.whl") ==
          std::vector<std::string>{"cu130-torch2.10-sm89", "cu13-torch2.10-sm89", "cu130-sm89", "torch2.10-sm89",
                                   "cu13-sm89", "sm89"});
    CHECK(of("flash_attn-2.8.3+cu130torch2.10-cp312-cp312-linux_x86_64.whl") ==
          std::vector<std::string>{"cu130-torch2.10", "cu13-torch2.10", "cu130", "torch2.10", "cu13"});
    // cu12 and torch2.8 alone are answered by the cu128 build, which names CUDA more precisely;
    // cu128 with the ABI by the build that names the ABI
    CHECK(of("flash_attn-2.8.3+cu12torch2.8cxx11abiTRUE-cp312-cp312-linux_x86_64.whl") ==
          std::vector<std::string>{"cu12-torch2.8-cxx11abi1", "cu128-torch2.8-cxx11abi1", "cu12-cxx11abi1",
                                   "torch2.8-cxx11abi1", "cu128-cxx11abi1", "cxx11abi1"});
    CHECK(of("flash_attn-2.8.3+cu128torch2.8-cp312-cp312-linux_x86_64.whl") ==
          std::vector<std::string>{"cu128-torch2.8", "cu12-torch2.8", "cu128", "torch2.8", "cu12"});
    CHECK(of("flash_attn-2.8.3-py3-none-any.whl").empty());
    // every answer is true: the view of each selector lists the build
    for (std::size_t index = 0; index < files.size(); ++index) {
        for (const auto& name : reach[index]) {
            CAPTURE(files[index].filename, name);
            CHECK(listed(files, name).count(files[index].filename) == 1);
        }
    }
}

TEST_CASE("variant view: a build is reached through its family's versions the project names",
          "[catalog][variant_view]") {
    const auto files = file_records_for({
        "sageattention-2.2.0+cu12torch2.9.0andhigher-cp39-abi3-win_amd64.whl",
        "sageattention-2.1.0+cu126torch2.10-cp39-abi3-win_amd64.whl",
        "sageattention-2.1.0+cu128torch2.11-cp39-abi3-win_amd64.whl",
    });
    const auto reach = catalog::reaching_selectors(files);
    REQUIRE(reach.size() == files.size());
    const std::set<std::string> lower_bound(reach[0].begin(), reach[0].end());
    for (const char* name : {"cu12", "cu126", "cu128", "torch2.9", "torch2.10", "torch2.11", "cu126-torch2.10",
                             "cu128-torch2.11", "cu12-torch2.9"}) {
        CAPTURE(name);
        CHECK(lower_bound.count(name) == 1);
    }
    for (std::size_t index = 0; index < files.size(); ++index) {
        for (const auto& name : reach[index]) {
            CAPTURE(files[index].filename, name);
            CHECK(listed(files, name).count(files[index].filename) == 1);
        }
    }
}

TEST_CASE("variant view: an H100 asking sm90 gets the sm90a build", "[catalog][variant_view]") {
    const auto files = file_records_for({
        "flash_attn_3-3.0.0+cu130torch2.10-cp312-cp312-linux_x86_64.whl",
        "flash_attn_3-3.0.0+cu130sm90atorch2.10-cp312-cp312-linux_x86_64.whl",
        "flash_attn_3-3.0.0+cu130sm100atorch2.10-cp312-cp312-linux_x86_64.whl",
        "flash_attn_3-3.0.0+cu130sm100ftorch2.10-cp312-cp312-linux_x86_64.whl",
    });
    CHECK(listed(files, "cu130-torch2.10-sm90") ==
          std::set<std::string>{"flash_attn_3-3.0.0+cu130sm90atorch2.10-cp312-cp312-linux_x86_64.whl"});
    // a B200 (10.0) gets the build with its architecture's features, a B300 (10.3) the family's
    CHECK(listed(files, "cu130-torch2.10-sm100") ==
          std::set<std::string>{"flash_attn_3-3.0.0+cu130sm100atorch2.10-cp312-cp312-linux_x86_64.whl"});
    CHECK(listed(files, "cu130-torch2.10-sm103") ==
          std::set<std::string>{"flash_attn_3-3.0.0+cu130sm100ftorch2.10-cp312-cp312-linux_x86_64.whl"});
    // an RTX 5090 (12.0): no build of its family, so the one for every GPU
    CHECK(listed(files, "cu130-torch2.10-sm120") ==
          std::set<std::string>{"flash_attn_3-3.0.0+cu130torch2.10-cp312-cp312-linux_x86_64.whl"});
    const auto reach = catalog::reaching_selectors(files);
    CHECK(reach[3] == std::vector<std::string>{"cu130-torch2.10-sm103", "cu13-torch2.10-sm103", "cu130-sm103",
                                               "torch2.10-sm103", "cu13-sm103", "sm103"});
}

TEST_CASE("variant view: a build's family label speaks the selector words", "[catalog][variant_view]") {
    const std::pair<const char*, const char*> table[] = {
        {"cu130sm89torch2.10.0", "cu130 · torch2.10 · sm89"},
        {"cu130torch2.10", "cu130 · torch2.10"},
        {"cu12torch2.7cxx11abiTRUE", "cu12 · torch2.7 · cxx11abi1"},
        {"cu128torch2.9.0andhigher", "cu128 · torch2.9.0andhigher"},
        {"cu130sm80.sm90a", "cu130 · sm80,sm90a"},
        {"rocm6.4torch2.8", "rocm6.4 · torch2.8"},
        {"cuda12.10", "cu12.10"},
        {"cpu", "cpu"},
        {"g1a2b3c4", ""},
    };
    for (const auto& [label, expected] : table) {
        CAPTURE(label);
        CHECK(catalog::family_label(variants::decode_local_label(label)) == expected);
    }
}

namespace {

catalog::file_record sdist_record(const std::string& project, const std::string& version) {
    catalog::file_record file;
    file.type = catalog::package_type::sdist;
    file.project = project;
    file.filename = project + "-" + version + ".tar.gz";
    file.version = version;
    file.normalized_version = version;
    file.sha256 = std::string(64, 'b');
    return file;
}

}  // namespace

TEST_CASE("variant view: an sdist stays out where the project's builds carry a variant", "[catalog][variant_view][sdist]") {
    auto files = flash_attn();
    files.push_back(sdist_record("flash_attn", "2.8.3"));
    for (const auto* selector : {"cu130", "cu128-torch2.8", "cpu", "rocm6.4", "torch2.10-sm89"}) {
        CAPTURE(selector);
        const auto names = listed(files, selector);
        CHECK_FALSE(names.contains("flash_attn-2.8.3.tar.gz"));
        CHECK(names.contains("flash_attn-2.8.3-py3-none-any.whl"));  // pure wheels stay
        const auto wanted = parse_selector(selector);
        std::vector<catalog::file_record> shown;
        for (const auto index : catalog::listed_files(files, *wanted)) shown.push_back(files[index]);
        CHECK_THAT(render::left_out_note(files, shown, "flash-attn"),
                   Catch::Contains("leaves out the sdists of flash-attn") && Catch::Contains("/simple/flash-attn/"));
    }
    CHECK(catalog::reaching_selectors(files).back().empty());
}

TEST_CASE("variant view: an sdist stays in where no build of the project carries a variant", "[catalog][variant_view][sdist]") {
    auto files = file_records_for({"six-1.17.0-py2.py3-none-any.whl"});
    files.push_back(sdist_record("six", "1.17.0"));
    for (const auto* selector : {"cu130", "cpu", "torch2.10"}) {
        CHECK(listed(files, selector) == std::set<std::string>{"six-1.17.0-py2.py3-none-any.whl", "six-1.17.0.tar.gz"});
    }
    CHECK(render::left_out_note(files, files, "six").empty());
}
