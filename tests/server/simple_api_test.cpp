#include <catch2/catch.hpp>

#include <boost/json.hpp>

#include "test_server.hpp"
#include "wheelhouse/crypto/hasher.hpp"

using namespace wheelhouse;
using namespace wheelhouse::testing;

namespace {

constexpr std::string_view pip_accept =
    "application/vnd.pypi.simple.v1+json, application/vnd.pypi.simple.v1+html; q=0.1, text/html; q=0.01";
constexpr std::string_view json_type = "application/vnd.pypi.simple.v1+json";

const std::string cu128_name = "flash_attn-2.8.3+cu128torch2.8-cp312-cp312-linux_x86_64.whl";
const std::string cu130_name = "flash_attn-2.8.3+cu130torch2.10-cp312-cp312-linux_x86_64.whl";

boost::json::object parse_json(const http_response& response) { return boost::json::parse(response.body()).as_object(); }

}  // namespace

TEST_CASE("server: an empty index answers both formats", "[server][simple]") {
    test_server server;
    const auto html = server.get("/simple/");
    CHECK(html.result_int() == 200);
    CHECK(html[http::field::content_type] == "text/html; charset=utf-8");
    // pip before 23.2 gets HTML where others get JSON: the page depends on User-Agent too
    CHECK(html[http::field::vary] == "Accept, User-Agent");
    CHECK_THAT(html.body(), Catch::Contains("<meta name=\"pypi:repository-version\" content=\"1.4\">"));

    const auto json = server.get("/simple/", {{http::field::accept, pip_accept}});
    CHECK(json[http::field::content_type] == json_type);
    const auto page = parse_json(json);
    CHECK(page.at("meta").at("api-version") == "1.4");
    CHECK(page.at("projects").as_array().empty());
}

TEST_CASE("server: project pages list every file with what pip needs", "[server][simple]") {
    test_server server;
    const auto wheel = make_wheel("flash_attn", "2.8.3+cu128torch2.8", "Flash <b>Attention</b>", ">=3.9,<3.14");
    const auto file = server.ingest(wheel, cu128_name);
    server.ingest(make_wheel("flash_attn", "2.8.3+cu130torch2.10"), cu130_name);

    SECTION("the project list names it") {
        const auto html = server.get("/simple/");
        CHECK_THAT(html.body(), Catch::Contains("<a href=\"flash-attn/\">flash_attn</a>"));
        const auto json = parse_json(server.get("/simple/?format=json"));
        CHECK(json.at("projects").as_array().at(0).at("name") == "flash_attn");
    }
    SECTION("HTML: hash fragment, escaped requires-python, both metadata attributes") {
        const auto html = server.get("/simple/flash-attn/").body();
        const auto sha = crypto::sha256_hex(wheel);
        CHECK(file.sha256 == sha);
        CHECK_THAT(html, Catch::Contains("href=\"/files/" + sha + "/flash_attn-2.8.3%2Bcu128torch2.8-cp312-cp312-linux_x86_64.whl#sha256=" + sha + "\""));
        CHECK_THAT(html, Catch::Contains("data-requires-python=\"&gt;=3.9,&lt;3.14\""));
        CHECK_THAT(html, Catch::Contains("data-dist-info-metadata=\"sha256=" + file.metadata_sha256 + "\""));
        CHECK_THAT(html, Catch::Contains("data-core-metadata=\"sha256=" + file.metadata_sha256 + "\""));
        CHECK_THAT(html, Catch::Contains(">" + cu128_name + "</a>"));
        CHECK_THAT(html, !Catch::Contains("data-yanked"));
    }
    SECTION("JSON: PEP 691 and PEP 700 fields, core-metadata only under its PEP 714 name") {
        const auto response = server.get("/simple/flash-attn/", {{http::field::accept, json_type}});
        CHECK(response[http::field::content_type] == json_type);
        const auto page = parse_json(response);
        CHECK(page.at("name") == "flash-attn");
        CHECK(page.at("project-status").at("status") == "active");
        const auto& versions = page.at("versions").as_array();
        REQUIRE(versions.size() == 2);
        CHECK(versions[0] == "2.8.3+cu128torch2.8");
        CHECK(versions[1] == "2.8.3+cu130torch2.10");
        const auto& files = page.at("files").as_array();
        REQUIRE(files.size() == 2);
        const auto& first = files[0].as_object();
        CHECK(first.at("filename").as_string() == cu128_name);
        CHECK(first.at("hashes").at("sha256").as_string() == file.sha256);
        CHECK(first.at("requires-python") == ">=3.9,<3.14");
        CHECK(first.at("size").to_number<std::uint64_t>() == wheel.size());
        CHECK(first.at("yanked") == false);
        CHECK(first.at("core-metadata").at("sha256").as_string() == file.metadata_sha256);
        CHECK_FALSE(first.contains("dist-info-metadata"));
        const std::string upload_time(first.at("upload-time").as_string());
        CHECK(upload_time.size() == 27);
        CHECK(upload_time.back() == 'Z');
        CHECK(first.at("_variant").at("cuda") == "12.8");
        CHECK(first.at("_variant").at("torch") == "2.8");
    }
    SECTION("pip 23.0 gets HTML, where it reads the core metadata") {
        const auto response = server.get("/simple/flash-attn/", {{http::field::accept, pip_accept},
                                                                 {http::field::user_agent, "pip/23.0.1 {}"}});
        CHECK(response[http::field::content_type] == "application/vnd.pypi.simple.v1+html");
        CHECK(response[http::field::vary] == "Accept, User-Agent");
        const auto modern = server.get("/simple/flash-attn/", {{http::field::accept, pip_accept},
                                                               {http::field::user_agent, "pip/25.2 {}"}});
        CHECK(modern[http::field::content_type] == json_type);
        CHECK(modern[http::field::vary] == "Accept, User-Agent");
    }
    SECTION("HEAD has the headers of GET and no body") {
        const auto get = server.get("/simple/flash-attn/");
        const auto head = server.request(http::verb::head, "/simple/flash-attn/");
        CHECK(head.result_int() == 200);
        CHECK(head[http::field::etag] == get[http::field::etag]);
        CHECK(head[http::field::content_length] == std::to_string(get.body().size()));
        CHECK(head.body().empty());
    }
    SECTION("ETag and If-None-Match give 304") {
        const auto first = server.get("/simple/flash-attn/");
        const std::string etag(first[http::field::etag]);
        CHECK(first[http::field::cache_control] == "max-age=60, public");
        const auto again = server.get("/simple/flash-attn/", {{http::field::if_none_match, etag}});
        CHECK(again.result_int() == 304);
        CHECK(again.body().empty());
        CHECK(again[http::field::etag] == etag);
        const auto other = server.get("/simple/flash-attn/", {{http::field::if_none_match, "\"stale\""}});
        CHECK(other.result_int() == 200);
    }
    SECTION("a new file changes the cached page at once") {
        const auto before = server.get("/simple/flash-attn/");
        server.ingest(make_wheel("flash_attn", "2.8.2"), "flash_attn-2.8.2-cp312-cp312-linux_x86_64.whl");
        const auto after = server.get("/simple/flash-attn/");
        CHECK(after[http::field::etag] != before[http::field::etag]);
        CHECK_THAT(after.body(), Catch::Contains("flash_attn-2.8.2-cp312-cp312-linux_x86_64.whl"));
        // 2.8.2 sorts before 2.8.3 by PEP 440
        CHECK(after.body().find("2.8.2-cp312") < after.body().find("2.8.3+cu128"));
    }
    SECTION("yanked files say so (PEP 592)") {
        REQUIRE(server.catalog().yank(cu128_name, "built against the wrong CUDA", "admin"));
        const auto html = server.get("/simple/flash-attn/").body();
        CHECK_THAT(html, Catch::Contains("data-yanked=\"built against the wrong CUDA\""));
        const auto page = parse_json(server.get("/simple/flash-attn/?format=json"));
        CHECK(page.at("files").as_array().at(0).at("yanked") == "built against the wrong CUDA");
    }
    SECTION("a quarantined project offers no files (PEP 792)") {
        REQUIRE(server.catalog().set_project_status("flash-attn", catalog::project_status::quarantined,
                                                    std::string("malware report"), "admin"));
        const auto html = server.get("/simple/flash-attn/").body();
        CHECK_THAT(html, Catch::Contains("<meta name=\"pypi:project-status\" content=\"quarantined\">"));
        CHECK_THAT(html, Catch::Contains("<meta name=\"pypi:project-status-reason\" content=\"malware report\">"));
        CHECK_THAT(html, !Catch::Contains(".whl"));
        CHECK(server.get("/files/" + file.sha256 + "/" + cu128_name).result_int() == 404);
    }
}

TEST_CASE("server: names are normalised by redirect and unknown projects are 404", "[server][simple]") {
    test_server server;
    server.ingest(make_wheel("flash_attn", "2.8.3+cu128torch2.8"), cu128_name);
    struct row {
        const char* target;
        unsigned status;
        const char* location;
    };
    const row table[] = {
        {"/simple", 301, "/simple/"},
        {"/simple/Flash_Attn/", 301, "/simple/flash-attn/"},
        {"/simple/flash_attn", 301, "/simple/flash-attn/"},
        {"/simple/flash-attn", 301, "/simple/flash-attn/"},
        {"/simple/FLASH.ATTN/?format=json", 301, "/simple/flash-attn/?format=json"},
        {"/simple/flash-attn/", 200, ""},
        {"/simple/nonexistent/", 404, ""},
        {"/simple/-bad-/", 404, ""},
        {"/simple/flash-attn/extra/", 404, ""},
        {"/nothing-here", 404, ""},
    };
    for (const auto& [target, status, location] : table) {
        CAPTURE(target);
        const auto response = server.get(target);
        CHECK(response.result_int() == status);
        if (*location) CHECK(response[http::field::location] == location);
    }
    CHECK_THAT(server.get("/simple/nonexistent/").body(), Catch::Contains("no project named 'nonexistent'"));
}

TEST_CASE("server: content negotiation refuses what it cannot offer", "[server][simple]") {
    test_server server;
    const auto refused = server.get("/simple/", {{http::field::accept, "application/json"}});
    CHECK(refused.result_int() == 406);
    CHECK_THAT(refused.body(), Catch::Contains("application/vnd.pypi.simple.v1+json"));
    CHECK(server.get("/simple/?format=xml").result_int() == 400);
    const auto forced = server.get("/simple/?format=json", {{http::field::accept, "text/html"}});
    CHECK(forced[http::field::content_type] == json_type);
    CHECK(forced[http::field::vary].empty());
}

TEST_CASE("server: wheels and their metadata download with ranges and validators", "[server][files]") {
    test_server server;
    const auto wheel = make_wheel("flash_attn", "2.8.3+cu128torch2.8");
    const auto file = server.ingest(wheel, cu128_name);
    const std::string url = "/files/" + file.sha256 + "/" + cu128_name;

    const auto whole = server.get(url);
    CHECK(whole.result_int() == 200);
    CHECK(whole.body() == wheel);
    CHECK(whole[http::field::etag] == "\"" + file.sha256 + "\"");
    CHECK(whole[http::field::accept_ranges] == "bytes");
    CHECK_THAT(std::string(whole[http::field::cache_control]), Catch::Contains("immutable"));

    const auto encoded = server.get("/files/" + file.sha256 + "/flash_attn-2.8.3%2Bcu128torch2.8-cp312-cp312-linux_x86_64.whl");
    CHECK(encoded.body() == wheel);

    const auto part = server.get(url, {{http::field::range, "bytes=10-19"}});
    CHECK(part.result_int() == 206);
    CHECK(part.body() == wheel.substr(10, 10));
    CHECK(part[http::field::content_range] == "bytes 10-19/" + std::to_string(wheel.size()));

    const auto tail = server.get(url, {{http::field::range, "bytes=-4"}});
    CHECK(tail.body() == wheel.substr(wheel.size() - 4));

    const auto stale = server.get(url, {{http::field::range, "bytes=0-9"}, {http::field::if_range, "\"other\""}});
    CHECK(stale.result_int() == 200);
    CHECK(stale.body() == wheel);

    const auto beyond = server.get(url, {{http::field::range, "bytes=99999999-"}});
    CHECK(beyond.result_int() == 416);
    CHECK(beyond[http::field::content_range] == "bytes */" + std::to_string(wheel.size()));

    CHECK(server.get(url, {{http::field::if_none_match, "\"" + file.sha256 + "\""}}).result_int() == 304);

    const auto head = server.request(http::verb::head, url);
    CHECK(head[http::field::content_length] == std::to_string(wheel.size()));

    const auto metadata = server.get(url + ".metadata");
    CHECK(metadata.result_int() == 200);
    CHECK(crypto::sha256_hex(metadata.body()) == file.metadata_sha256);
    CHECK_THAT(metadata.body(), Catch::StartsWith("Metadata-Version: 2.1\nName: flash_attn\n"));

    CHECK(server.get("/files/" + std::string(64, 'a') + "/" + cu128_name).result_int() == 404);
    CHECK(server.get("/files/" + file.sha256 + "/other-1.0-py3-none-any.whl").result_int() == 404);
    CHECK(server.get("/files/not-a-hash/" + cu128_name).result_int() == 404);
    CHECK(server.request(http::verb::post, url).result_int() == 405);
}
