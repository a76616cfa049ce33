#include <catch2/catch.hpp>

#include <algorithm>
#include <set>
#include <thread>

#include <boost/json.hpp>

#include "file_records.hpp"
#include "test_support.hpp"
#include "wheelhouse/auth/scope.hpp"
#include "wheelhouse/catalog/audit.hpp"
#include "wheelhouse/catalog/catalog.hpp"
#include "wheelhouse/catalog/download_counter.hpp"
#include "wheelhouse/catalog/project_search.hpp"
#include "wheelhouse/crypto/hasher.hpp"
#include "wheelhouse/render/admin_json.hpp"

// The filters below name only the parameters they give; g++ 12 would otherwise warn about the
// designated initializers that leave the rest at their defaults.
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

using namespace wheelhouse;
using namespace wheelhouse::catalog;
using wheelhouse::testing::file_record_for;
using wheelhouse::testing::temp_dir;

namespace {

std::unique_ptr<catalog::catalog> open_catalog(const temp_dir& dir) {
    auto opened = catalog::catalog::open(dir / "catalog.db");
    REQUIRE(opened);
    return std::move(opened).value();
}

// A row as ingest would write it for `filename`, `size` bytes, uploaded at `upload_ms`.
file_record add(catalog::catalog& db, const std::string& filename, std::uint64_t size, std::int64_t upload_ms) {
    new_file file;
    file.file = file_record_for(filename);
    file.file.sha256 = crypto::sha256_hex(filename);
    file.file.size = size;
    file.file.upload_time_ms = upload_ms;
    file.project_display_name = filename.substr(0, filename.find('-'));
    auto added = db.add_file(file);
    REQUIRE(added);
    return added->file;
}

std::vector<std::string> names(const project_page& page) {
    std::vector<std::string> out;
    for (const auto& summary : page.projects) out.push_back(summary.project.name);
    return out;
}

}  // namespace

TEST_CASE("project search: typed text folds as PEP 503 folds names", "[project_search]") {
    const std::pair<const char*, const char*> table[] = {
        {"Flash_Attn", "flash-attn"},   {"flash-attn", "flash-attn"}, {"FLASH.attn", "flash-attn"},
        {"flash__-.attn", "flash-attn"}, {"flash attn", "flash-attn"}, {"  flash_", "flash"},
        {"_attn", "attn"},               {"", ""},                     {"nunchaku", "nunchaku"},
        {"cu130", "cu130"},
    };
    for (const auto& [typed, folded] : table) {
        CAPTURE(typed);
        CHECK(normalize_search(typed) == folded);
    }
}

TEST_CASE("project search: sort names parse, others are refused by name", "[project_search]") {
    for (const auto sort : {project_sort::name, project_sort::recent, project_sort::files, project_sort::size}) {
        auto parsed = parse_project_sort(to_string(sort));
        REQUIRE(parsed);
        CHECK(*parsed == sort);
    }
    auto bad = parse_project_sort("downloads");
    REQUIRE_FALSE(bad);
    CHECK(bad.error().message == "sort 'downloads' is not one of name, recent, files, size");
}

TEST_CASE("project search: the latest release is the newest by PEP 440 that is not yanked", "[project_search]") {
    CHECK(latest_release({}).empty());
    CHECK(latest_release({{"2.8.3+cu128torch2.8"}, {"2.10.0+cu130"}, {"2.9.0"}}) == "2.10.0");
    CHECK(latest_release({{"1.0"}, {"1.0rc1"}, {"0.9"}}) == "1.0");
    CHECK(latest_release({{"1.0"}, {"2.0", true}}) == "1.0");
    CHECK(latest_release({{"1.0", true}, {"2.0", true}}) == "2.0");
    CHECK(latest_release({{"not a version"}, {"0.1"}}) == "0.1");
}

TEST_CASE("project search: search, sort and pages in SQL", "[project_search]") {
    temp_dir dir;
    auto db = open_catalog(dir);
    add(*db, "flash_attn-2.8.3+cu128torch2.8-cp312-cp312-linux_x86_64.whl", 100, 1'000);
    add(*db, "flash_attn-2.8.2-cp312-cp312-linux_x86_64.whl", 50, 2'000);
    add(*db, "flash_attn_3-3.0.0b1-cp312-cp312-linux_x86_64.whl", 10, 5'000);
    add(*db, "einops-0.8.1-py3-none-any.whl", 500, 3'000);
    add(*db, "nunchaku-1.0.0+torch2.8-cp312-cp312-linux_x86_64.whl", 7, 4'000);

    SECTION("a search matches anywhere in the normalised name") {
        project_query query;
        query.search = "Flash_Attn";
        auto page = search_projects(*db, query);
        REQUIRE(page);
        CHECK(page->total == 2);
        CHECK(names(*page) == std::vector<std::string>{"flash-attn", "flash-attn-3"});
        const auto& flash = page->projects[0];
        CHECK(flash.file_count == 2);
        CHECK(flash.total_size == 150);
        CHECK(flash.last_upload_ms == 2'000);
        CHECK(flash.latest_version == "2.8.3");
        CHECK(flash.project.display_name == "flash_attn");
        query.search = "attn-3";
        CHECK(names(*search_projects(*db, query)) == std::vector<std::string>{"flash-attn-3"});
        query.search = "zzz";
        auto none = search_projects(*db, query);
        REQUIRE(none);
        CHECK(none->total == 0);
        CHECK(none->projects.empty());
    }
    SECTION("each sort order") {
        project_query query;
        CHECK(names(*search_projects(*db, query)) ==
              std::vector<std::string>{"einops", "flash-attn", "flash-attn-3", "nunchaku"});
        query.sort = project_sort::recent;
        CHECK(names(*search_projects(*db, query)) ==
              std::vector<std::string>{"flash-attn-3", "nunchaku", "einops", "flash-attn"});
        query.sort = project_sort::files;
        CHECK(names(*search_projects(*db, query)).front() == "flash-attn");
        query.sort = project_sort::size;
        CHECK(names(*search_projects(*db, query)) ==
              std::vector<std::string>{"einops", "flash-attn", "flash-attn-3", "nunchaku"});
    }
    SECTION("pages") {
        project_query query;
        query.per_page = 3;
        query.page = 2;
        auto page = search_projects(*db, query);
        REQUIRE(page);
        CHECK(page->total == 4);
        CHECK(names(*page) == std::vector<std::string>{"nunchaku"});
        query.page = 3;
        CHECK(search_projects(*db, query)->projects.empty());
    }
    SECTION("a project-limited token's filter counts and lists only its projects, in every sort") {
        project_query query;
        query.visible.patterns = {"flash-attn-*", "nunchaku"};
        for (const auto sort : {project_sort::name, project_sort::recent, project_sort::files, project_sort::size}) {
            query.sort = sort;
            auto page = search_projects(*db, query);
            REQUIRE(page);
            CHECK(page->total == 2);
            auto listed = names(*page);
            std::sort(listed.begin(), listed.end());
            CHECK(listed == std::vector<std::string>{"flash-attn-3", "nunchaku"});
        }
        query.search = "attn";
        query.sort = project_sort::name;
        CHECK(names(*search_projects(*db, query)) == std::vector<std::string>{"flash-attn-3"});
        query.visible.patterns = {"nothing-matches-*"};
        auto none = search_projects(*db, query);
        REQUIRE(none);
        CHECK(none->total == 0);
        CHECK(none->projects.empty());
    }
    SECTION("bounds are refused with the reason") {
        project_query query;
        query.page = 0;
        CHECK(search_projects(*db, query).error().message == "page 0 is before the first; pages start at 1");
        query.page = 1;
        query.per_page = max_per_page + 1;
        CHECK(search_projects(*db, query).error().message == "per_page 201 is outside 1..200");
    }
    SECTION("the JSON of a page") {
        project_query query;
        query.search = "FLASH";
        query.per_page = 1;
        auto page = search_projects(*db, query);
        REQUIRE(page);
        const auto json = boost::json::parse(render::project_list_json(*page, query)).as_object();
        CHECK(json.at("query") == "flash");
        CHECK(json.at("total") == 2);
        CHECK(json.at("pages") == 2);
        CHECK(json.at("sort") == "name");
        const auto& first = json.at("projects").as_array().at(0).as_object();
        CHECK(first.at("name") == "flash-attn");
        CHECK(first.at("latest_version") == "2.8.3");
        CHECK(first.at("file_count") == 2);
        CHECK(first.at("last_upload") == "1970-01-01T00:00:02.000000Z");
    }
}

// The filter matches in SQL with GLOB; a token's limits are checked one at a time with
// auth::glob_match. Both must agree on every name, or a list would show what a page refuses.
TEST_CASE("project filter: the /simple/ list shows what auth::permits allows, and nothing else", "[project_search]") {
    temp_dir dir;
    auto db = open_catalog(dir);
    const std::vector<std::string> projects = {"a", "ab", "aab", "flash-attn", "flash-attn-3", "nunchaku",
                                               "nunchaku-kernels", "x-1", "x-12", "torch"};
    for (const auto& name : projects) {
        std::string dist = name;
        std::replace(dist.begin(), dist.end(), '-', '_');
        add(*db, dist + "-1.0-py3-none-any.whl", 1, 1'000);
    }
    const std::vector<std::vector<std::string>> filters = {
        {"flash-attn"}, {"flash-*"}, {"*-attn*"}, {"a*b"}, {"*b"}, {"?"}, {"x-?"}, {"x-??"}, {"*"},
        {"nunchaku*", "torch"}, {"*a*a*"}, {"no-such"}, {"???"}, {"*-*-*"},
    };
    for (const auto& patterns : filters) {
        CAPTURE(patterns);
        auto listed = db->list_projects(catalog::project_filter{patterns});
        REQUIRE(listed);
        std::vector<std::string> shown;
        for (const auto& listing : *listed) shown.push_back(listing.project.name);
        const auth::token_grant grant{"limited", auth::scope::read, patterns};
        std::vector<std::string> permitted;
        for (const auto& name : projects) {
            if (auth::permits(grant, auth::scope::read, name)) permitted.push_back(name);
        }
        std::sort(permitted.begin(), permitted.end());
        CHECK(shown == permitted);
    }
    auto every = db->list_projects();
    REQUIRE(every);
    CHECK(every->size() == projects.size());
}

TEST_CASE("project search: which interpreters a wheel's tags install on", "[project_search]") {
    struct row {
        const char* python;
        const char* abi;
        const char* interpreter;
        bool installs;
    };
    const row table[] = {
        {"cp312", "cp312", "cp312", true},     {"cp312", "cp312", "cp311", false},
        {"cp311.cp312", "cp311.cp312", "cp312", true},
        {"cp39", "abi3", "cp312", true},        // the stable ABI, from 3.9 on
        {"cp39", "abi3", "cp38", false},        {"cp39", "abi3", "cp314t", false},  // not free-threaded
        {"cp314", "cp314t", "cp314t", true},    {"cp314", "cp314t", "cp314", false},
        {"cp314", "cp314", "cp314t", false},    {"py3", "none", "cp314t", true},     // pure
        {"py2.py3", "none", "cp312", true},     {"py312", "none", "cp312", true},
        {"py312", "none", "cp313", false},      {"cp312", "none", "cp312", true},
        {"pp310", "pypy310_pp73", "cp310", false},
    };
    for (const auto& [python, abi, interpreter, installs] : table) {
        CAPTURE(python, abi, interpreter);
        CHECK(installs_on_python(python, abi, interpreter) == installs);
    }
}

TEST_CASE("project search: filter words parse as the variant indexes spell them, or as bare versions",
          "[project_search]") {
    auto parsed = [](build_filter_text text) {
        auto filter = parse_build_filter(text);
        REQUIRE(filter);
        return *filter;
    };
    CHECK(parsed({.cuda = "cu130"}).wanted.canonical() == "cu130");
    CHECK(parsed({.cuda = "13.0", .torch = "2.10", .sm = "12.0"}).wanted.canonical() == "cu130-torch2.10-sm120");
    CHECK(parsed({.cuda = "cuda12.8", .sm = "sm_90a"}).wanted.canonical() == "cu128-sm90");
    CHECK(parsed({.rocm = "6.4"}).wanted.canonical() == "rocm6.4");
    CHECK(parsed({.torch = "torch2.10.0"}).wanted.canonical() == "torch2.10");  // a family, as heads say
    CHECK(parsed({.python = "3.14t"}).python == std::optional<std::string>("cp314t"));
    CHECK(parsed({.python = "cp312", .lacks = true}).lacks);
    CHECK_FALSE(parsed({}).active());
    CHECK(parsed({.kind = "sdist", .lacks = true}).kind == catalog::package_type::sdist);
    CHECK(parsed({.cuda = "cu130", .kind = "wheel"}).kind == catalog::package_type::wheel);
    struct refusal {
        build_filter_text text;
        const char* phrase;
    };
    const refusal refusals[] = {
        {{.cuda = "torch2.10"}, "cuda 'torch2.10' is not one cuda word; give one such as cu130"},
        {{.cuda = "cu130-sm89"}, "cuda 'cu130-sm89'"},
        {{.sm = "banana"}, "sm 'banana'"},
        {{.cuda = "cu130", .rocm = "6.4"}, "contradict"},
        {{.python = "3"}, "python '3' is not an interpreter"},
        {{.python = "cpython"}, "python 'cpython'"},
        {{.lacks = true}, "lacks needs something to lack"},
        {{.kind = "egg"}, "kind 'egg' is no kind of file; give wheel or sdist"},
        {{.cuda = "cu130", .kind = "sdist"}, "kind=sdist stands alone"},
        {{.python = "cp312", .kind = "sdist"}, "kind=sdist stands alone"},
    };
    for (const auto& [text, phrase] : refusals) {
        CAPTURE(phrase);
        const auto filter = parse_build_filter(text);
        REQUIRE_FALSE(filter);
        CHECK_THAT(filter.error().message, Catch::Contains(phrase));
    }
}

TEST_CASE("project search: projects with, and without, a build for a GPU stack and an interpreter",
          "[project_search]") {
    temp_dir dir;
    auto db = open_catalog(dir);
    for (const char* filename : {
             "flash_attn-2.8.3+cu130sm120torch2.10.0-cp312-cp312-linux_x86_64.whl",
             "flash_attn-2.8.3+cu128torch2.8-cp311-cp311-linux_x86_64.whl",
             "flash_attn_3-3.0.0+cu130sm90atorch2.10-cp39-abi3-linux_x86_64.whl",
             "nunchaku-1.0.0+torch2.10-cp312-cp312-linux_x86_64.whl",  // says nothing of CUDA
             "sageattention-2.2.0+cu12torch2.9.0andhigher-cp39-abi3-win_amd64.whl",
             "vllm_rocm-0.9.0+rocm6.4torch2.8-cp312-cp312-linux_x86_64.whl",
             "einops-0.8.1-py3-none-any.whl",
             "xformers-0.0.30-cp314-cp314t-linux_x86_64.whl",
             "einops-0.8.1.tar.gz",
             "flash_attn-2.8.3.tar.gz",
             "sdistonly-1.0.tar.gz",  // a project with no wheel at all
         }) {
        add(*db, filename, 1, 1'000);
    }
    auto listed = [&](build_filter_text text, project_filter visible = {}) {
        project_query query;
        auto filter = parse_build_filter(text);
        REQUIRE(filter);
        query.builds = *filter;
        query.visible = std::move(visible);
        auto page = search_projects(*db, query);
        REQUIRE(page);
        CHECK(page->total == static_cast<std::int64_t>(page->projects.size()));
        return names(*page);
    };
    using list = std::vector<std::string>;
    CHECK(listed({.cuda = "cu130"}) == list{"flash-attn", "flash-attn-3"});
    // a cu12 build is one for CUDA 12.8; a torch-only build is one for no CUDA
    CHECK(listed({.cuda = "cu128"}) == list{"flash-attn", "sageattention"});
    CHECK(listed({.cuda = "cu130", .lacks = true}) ==
          list{"einops", "nunchaku", "sageattention", "sdistonly", "vllm-rocm", "xformers"});
    CHECK(listed({.sm = "sm120"}) == list{"flash-attn"});
    CHECK(listed({.sm = "sm90"}) == list{"flash-attn-3"});  // its sm90a build runs there
    // the lower bound counts for every later torch
    CHECK(listed({.torch = "torch2.10"}) == list{"flash-attn", "flash-attn-3", "nunchaku", "sageattention"});
    CHECK(listed({.torch = "2.8"}) == list{"flash-attn", "vllm-rocm"});
    CHECK(listed({.rocm = "rocm6.4"}) == list{"vllm-rocm"});
    // one build must have all that is named: flash-attn's cu130 build is for torch 2.10, its
    // torch 2.8 build for CUDA 12.8
    CHECK(listed({.cuda = "cu130", .torch = "2.8"}).empty());
    CHECK(listed({.cuda = "cu130", .torch = "2.10", .sm = "sm120"}) == list{"flash-attn"});
    CHECK(listed({.python = "cp312"}) ==
          list{"einops", "flash-attn", "flash-attn-3", "nunchaku", "sageattention", "vllm-rocm"});
    CHECK(listed({.python = "cp314t"}) == list{"einops", "xformers"});
    CHECK(listed({.cuda = "cu130", .python = "cp311"}) == list{"flash-attn-3"});  // abi3 from 3.9
    CHECK(listed({.cuda = "cu130", .python = "cp38"}).empty());
    CHECK(listed({.python = "cp314t", .lacks = true}) ==
          list{"flash-attn", "flash-attn-3", "nunchaku", "sageattention", "sdistonly", "vllm-rocm"});
    // an sdist counts for no machine or interpreter, and for its kind
    CHECK(listed({.kind = "sdist"}) == list{"einops", "flash-attn", "sdistonly"});
    CHECK(listed({.kind = "sdist", .lacks = true}) ==
          list{"flash-attn-3", "nunchaku", "sageattention", "vllm-rocm", "xformers"});
    CHECK(listed({.kind = "wheel", .lacks = true}) == list{"sdistonly"});
    CHECK(listed({.cuda = "cu128", .kind = "wheel"}) == list{"flash-attn", "sageattention"});
    // a project-limited token's list: the filter never shows what the token cannot see
    CHECK(listed({.cuda = "cu130"}, project_filter{{"flash-attn-*"}}) == list{"flash-attn-3"});
    CHECK(listed({.cuda = "cu130", .lacks = true}, project_filter{{"flash-attn*"}}).empty());
    // pages and the count agree
    project_query query;
    query.builds = *parse_build_filter({.cuda = "cu130", .lacks = true});
    query.per_page = 2;
    query.page = 2;
    auto page = search_projects(*db, query);
    REQUIRE(page);
    CHECK(page->total == 6);
    CHECK(names(*page) == list{"sageattention", "sdistonly"});
}

TEST_CASE("project search: the filter words the visible builds name", "[project_search]") {
    temp_dir dir;
    auto db = open_catalog(dir);
    for (const char* filename : {
             "flash_attn-2.8.3+cu130sm120torch2.10.0-cp312-cp312-linux_x86_64.whl",
             "flash_attn-2.8.3+cu12torch2.8cxx11abiTRUE-cp311-cp311-linux_x86_64.whl",
             "flash_attn_3-3.0.0+cu130sm90atorch2.10-cp39-abi3-linux_x86_64.whl",
             "vllm_rocm-0.9.0+rocm6.4torch2.8-cp312-cp312-linux_x86_64.whl",
             "xformers-0.0.30+cu128sm80.sm100f-cp314-cp314t-linux_x86_64.whl",
             "vllm_rocm-0.9.0.tar.gz",
         }) {
        add(*db, filename, 1, 1'000);
    }
    auto words = words_of_builds(*db, {});
    REQUIRE(words);
    using set = std::set<std::string>;
    CHECK(words->cuda == set{"cu12", "cu128", "cu130"});
    CHECK(words->torch == set{"torch2.10", "torch2.8"});
    CHECK(words->sm == set{"sm100", "sm120", "sm80", "sm90"});
    CHECK(words->rocm == set{"rocm6.4"});
    CHECK(words->python == set{"cp311", "cp312", "cp314t", "cp39"});
    auto limited = words_of_builds(*db, project_filter{{"vllm-*"}});
    REQUIRE(limited);
    CHECK(limited->cuda.empty());
    CHECK(limited->rocm == set{"rocm6.4"});
    CHECK(words->kind == set{"sdist", "wheel"});
    auto without_sdists = words_of_builds(*db, project_filter{{"flash-*"}});
    REQUIRE(without_sdists);
    CHECK(without_sdists->kind == set{"wheel"});
}

TEST_CASE("download counter: days are UTC calendar days", "[download_counter]") {
    CHECK(utc_day(0) == "1970-01-01");
    CHECK(utc_day(86'399'999) == "1970-01-01");
    CHECK(utc_day(86'400'000) == "1970-01-02");
    CHECK(utc_day(1'763'769'600'000) == "2025-11-22");
    CHECK(utc_day(-1) == "1969-12-31");
}

TEST_CASE("download counter: counts in memory, adds them per day on flush, drops deleted files", "[download_counter]") {
    temp_dir dir;
    auto db = open_catalog(dir);
    const auto kept = add(*db, "einops-0.8.1-py3-none-any.whl", 1, 1);
    const auto deleted = add(*db, "einops-0.8.0-py3-none-any.whl", 1, 1);
    const std::int64_t day_one = 1'763'769'600'000;  // 2025-11-22
    const std::int64_t day_two = day_one + 86'400'000;

    auto read = [&](std::int64_t id) {
        std::vector<daily_downloads> days;
        REQUIRE(db->read_snapshot([&](sqlite::connection& connection) -> result<void> {
            auto found = read_downloads(connection, id);
            if (!found) return found.error();
            days = std::move(*found);
            return {};
        }));
        return days;
    };
    {
        download_counter counter(*db, std::chrono::hours(1));  // flushed by hand here
        counter.record(kept.id, day_one);
        counter.record(kept.id, day_one + 5);
        counter.record(kept.id, day_two);
        counter.record(deleted.id, day_one);
        CHECK(read(kept.id).empty());  // nothing written before a flush
        REQUIRE(db->delete_file(deleted.filename, "test"));
        REQUIRE(counter.flush());
        auto days = read(kept.id);
        REQUIRE(days.size() == 2);
        CHECK(days[0].day == "2025-11-22");
        CHECK(days[0].count == 2);
        CHECK(days[1].day == "2025-11-23");
        CHECK(days[1].count == 1);
        counter.record(kept.id, day_two);
    }  // the destructor flushes what is left
    auto days = read(kept.id);
    REQUIRE(days.size() == 2);
    CHECK(days[1].count == 2);
    CHECK(read(deleted.id).empty());
}

TEST_CASE("download counter: the flushing thread writes within its interval", "[download_counter]") {
    temp_dir dir;
    auto db = open_catalog(dir);
    const auto file = add(*db, "einops-0.8.1-py3-none-any.whl", 1, 1);
    download_counter counter(*db, std::chrono::milliseconds(20));
    counter.record(file.id);
    std::int64_t total = 0;
    for (int attempt = 0; attempt < 200 && total == 0; ++attempt) {
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
        REQUIRE(db->read_snapshot([&](sqlite::connection& connection) -> result<void> {
            auto found = read_downloads(connection, file.id);
            if (!found) return found.error();
            for (const auto& day : *found) total += day.count;
            return {};
        }));
    }
    CHECK(total == 1);
}

TEST_CASE("audit: entries read back newest first, by target when asked", "[audit]") {
    temp_dir dir;
    auto db = open_catalog(dir);
    const auto file = add(*db, "einops-0.8.1-py3-none-any.whl", 1, 1);
    REQUIRE(db->yank(file.filename, "broken", "alice"));
    REQUIRE(db->unyank(file.filename, "bob", std::optional<std::string>("fixed upstream")));
    REQUIRE(db->set_project_status("einops", project_status::archived, std::string("moved"), "carol"));
    std::vector<audit_entry> all, about_file;
    REQUIRE(db->read_snapshot([&](sqlite::connection& connection) -> result<void> {
        auto everything = read_audit(connection, audit_query{});
        if (!everything) return everything.error();
        all = std::move(everything->entries);
        audit_query about;
        about.target = file.filename;
        auto some = read_audit(connection, about);
        if (!some) return some.error();
        about_file = std::move(some->entries);
        return {};
    }));
    REQUIRE(all.size() >= 3);
    CHECK(all[0].actor == "carol");
    CHECK(all[0].action == "set_status");
    CHECK(all[0].detail == std::optional<std::string>("archived: moved"));
    CHECK(all[1].action == "unyank");
    CHECK(all[1].detail == std::optional<std::string>("fixed upstream"));
    REQUIRE(about_file.size() >= 2);
    for (const auto& entry : about_file) CHECK(entry.target == file.filename);
    CHECK(about_file[0].actor == "bob");
    CHECK(about_file[1].actor == "alice");
    CHECK(about_file[1].detail == std::optional<std::string>("broken"));
}

TEST_CASE("audit: pages, filters by actor and action, and a search that finds a short hash", "[audit]") {
    temp_dir dir;
    auto db = open_catalog(dir);
    std::vector<file_record> files;
    for (int i = 0; i < 12; ++i) files.push_back(add(*db, "demo-1.0." + std::to_string(i) + "-py3-none-any.whl", 1, 1));
    REQUIRE(db->yank(files[3].filename, "Broken on SM120", "alice"));
    REQUIRE(db->yank(files[4].filename, "broken too", "bob"));
    auto read = [&](audit_query query) {
        audit_page page;
        REQUIRE(db->read_snapshot([&](sqlite::connection& connection) -> result<void> {
            auto found = read_audit(connection, query);
            if (!found) return found.error();
            page = std::move(*found);
            return {};
        }));
        return page;
    };
    audit_query query;
    query.per_page = 5;
    auto first = read(query);
    CHECK(first.total == 14);
    REQUIRE(first.entries.size() == 5);
    CHECK(first.entries[0].actor == "bob");
    CHECK(first.actions == std::vector<std::string>{"add_file", "yank"});
    query.page = 3;
    auto last = read(query);
    REQUIRE(last.entries.size() == 4);
    CHECK(last.entries.back().target == files[0].filename);  // the oldest, on the last page
    query.page = 4;
    CHECK(read(query).entries.empty());

    audit_query yanks;
    yanks.action = "yank";
    CHECK(read(yanks).total == 2);
    yanks.actor = "alice";
    const auto by_alice = read(yanks);
    REQUIRE(by_alice.total == 1);
    CHECK(by_alice.entries[0].target == files[3].filename);
    audit_query search;
    search.search = "sm120";  // any case
    CHECK(read(search).total == 1);
    // the twelve first characters of a sha256, as the page shows them, find the upload
    search.search = files[7].sha256.substr(0, 12);
    const auto by_hash = read(search);
    REQUIRE(by_hash.total == 1);
    CHECK(by_hash.entries[0].action == "add_file");
    CHECK(by_hash.entries[0].target == files[7].filename);

    REQUIRE(db->read_snapshot([&](sqlite::connection& connection) -> result<void> {
        audit_query before_first;
        before_first.page = 0;
        CHECK_FALSE(read_audit(connection, before_first));
        return {};
    }));
}

TEST_CASE("admin json: a file's details, METADATA as text and downloads", "[admin_json]") {
    render::file_detail detail;
    detail.file = file_record_for("flash_attn-2.8.3+cu130sm89torch2.10.0-cp314-cp314t-linux_x86_64.whl");
    detail.file.size = 42;
    detail.file.upload_time_ms = 1'000;
    detail.file.uploaded_by = "ci-flash";
    detail.file.yanked_reason = "bad build";
    detail.file.summary = "<img src=x onerror=alert(1)>";
    detail.project.name = "flash-attn";
    detail.project.display_name = "flash_attn";
    detail.metadata_text = std::string("Name: flash_attn\nSummary: caf\xC3\xA9 \xFF\n");
    detail.downloads = {{"2025-11-21", 3}, {"2025-11-22", 4}};
    const auto json = boost::json::parse(render::file_detail_json(detail, {})).as_object();
    CHECK(json.at("yanked") == "bad build");
    CHECK(json.at("uploaded_by") == "ci-flash");
    CHECK(json.at("summary") == "<img src=x onerror=alert(1)>");  // data, escaped by JSON; the page sets it as text
    CHECK(json.at("abi_tag") == "cp314t");
    CHECK(json.at("variant") == boost::json::object{{"cuda", "13.0"}, {"sm", "8.9"}, {"torch", "2.10.0"}});
    CHECK(json.at("location").at("mode") == "local");
    CHECK(json.at("location").at("url").as_string().starts_with("/files/"));
    CHECK(json.at("location").at("remote_url").is_null());
    CHECK(json.at("location").at("fetch_url").is_null());
    CHECK(json.at("metadata").at("text") == "Name: flash_attn\nSummary: caf\xC3\xA9 \xEF\xBF\xBD\n");
    CHECK(json.at("downloads").at("total") == 7);
    CHECK(json.at("downloads").at("days").as_array().size() == 2);
    CHECK(json.at("upload_time") == "1970-01-01T00:00:01.000000Z");
}
