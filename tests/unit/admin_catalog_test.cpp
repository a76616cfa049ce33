#include <catch2/catch.hpp>

#include <algorithm>
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
        auto everything = read_audit(connection, 10, std::nullopt);
        if (!everything) return everything.error();
        all = std::move(*everything);
        auto some = read_audit(connection, 10, file.filename);
        if (!some) return some.error();
        about_file = std::move(*some);
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
