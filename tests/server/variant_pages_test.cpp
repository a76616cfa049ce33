#include <catch2/catch.hpp>

#include <map>
#include <set>
#include <string>

#include <boost/json.hpp>

#include "test_server.hpp"

using namespace wheelhouse;
using namespace wheelhouse::testing;

namespace {

constexpr std::string_view json_type = "application/vnd.pypi.simple.v1+json";

const std::string cu128 = "flash_attn-2.8.3+cu128torch2.8-cp312-cp312-linux_x86_64.whl";
const std::string cu130 = "flash_attn-2.8.3+cu130torch2.10-cp312-cp312-linux_x86_64.whl";
const std::string cu130_sm89 = "flash_attn-2.8.3+cu130sm89torch2.10.0-cp312-cp312-linux_x86_64.whl";
const std::string cu130_sm120 = "flash_attn-2.8.3+cu130sm120torch2.10.0-cp312-cp312-linux_x86_64.whl";
const std::string cu12_abi = "flash_attn-2.8.3+cu12torch2.8cxx11abiTRUE-cp312-cp312-linux_x86_64.whl";
const std::string einops = "einops-0.8.1-py3-none-any.whl";

// The version a filename carries, for make_wheel.
std::string version_of(const std::string& filename) {
    const auto first = filename.find('-') + 1;
    return filename.substr(first, filename.find('-', first) - first);
}

// flash-attn as the issue describes it, and a pure-Python dependency.
void fill(test_server& server) {
    for (const auto& name : {cu128, cu130, cu130_sm89, cu130_sm120, cu12_abi})
        server.ingest(make_wheel("flash_attn", version_of(name)), name);
    server.ingest(make_wheel("einops", "0.8.1"), einops);
}

boost::json::object parse_json(const http_response& response) { return boost::json::parse(response.body()).as_object(); }

std::set<std::string> json_filenames(const http_response& response) {
    std::set<std::string> names;
    const auto page = parse_json(response);
    for (const auto& file : page.at("files").as_array())
        names.insert(std::string(file.at("filename").as_string()));
    return names;
}

}  // namespace

TEST_CASE("server: a variant index lists one best fit per build slot and every pure file", "[server][variants]") {
    test_server server;
    fill(server);

    SECTION("JSON names the variant of each file it lists") {
        const auto response = server.get("/variants/cu130-torch2.10-sm89/simple/flash-attn/",
                                          {{http::field::accept, json_type}});
        REQUIRE(response.result_int() == 200);
        CHECK(response[http::field::content_type] == json_type);
        CHECK(response[http::field::vary] == "Accept, User-Agent");
        const auto page = parse_json(response);
        CHECK(page.at("name") == "flash-attn");
        CHECK(page.at("versions") == boost::json::array{"2.8.3+cu130sm89torch2.10.0"});
        const auto& files = page.at("files").as_array();
        REQUIRE(files.size() == 1);
        CHECK(files[0].at("filename").as_string() == cu130_sm89);
        CHECK(files[0].at("_variant") == boost::json::object{{"cuda", "13.0"}, {"sm", "8.9"}, {"torch", "2.10.0"}});
        CHECK(files[0].at("url").as_string().starts_with("/files/"));
    }
    SECTION("HTML holds the same file, with what pip needs") {
        const auto html = server.get("/variants/cu130-torch2.10-sm89/simple/flash-attn/");
        REQUIRE(html.result_int() == 200);
        CHECK(html[http::field::content_type] == "text/html; charset=utf-8");
        CHECK_THAT(html.body(), Catch::Contains(">" + cu130_sm89 + "</a>"));
        CHECK_THAT(html.body(), Catch::Contains("data-core-metadata=\"sha256="));
        for (const auto& other : {cu128, cu130, cu130_sm120, cu12_abi}) CHECK_THAT(html.body(), !Catch::Contains(other));
    }
    SECTION("a dependency without a variant is in every index") {
        for (const auto* index : {"/simple/", "/variants/cu130-torch2.10-sm89/simple/", "/variants/cpu/simple/",
                                  "/variants/rocm6.4/simple/"}) {
            CAPTURE(index);
            CHECK(json_filenames(server.get(std::string(index) + "einops/?format=json")) == std::set{einops});
        }
    }
    SECTION("every index lists every project, as /simple/ does") {
        const auto plain = server.get("/simple/?format=json");
        const auto variant = server.get("/variants/cu130/simple/?format=json");
        REQUIRE(variant.result_int() == 200);
        CHECK(variant.body() == plain.body());
        CHECK(variant[http::field::etag] == plain[http::field::etag]);
        CHECK_THAT(server.get("/variants/cu130/simple/").body(), Catch::Contains("<a href=\"flash-attn/\">flash_attn</a>"));
    }
    SECTION("which build each machine gets") {
        struct row {
            const char* selector;
            std::set<std::string> files;
        };
        const row table[] = {
            {"cu130-torch2.10-sm89", {cu130_sm89}},
            {"cu130-torch2.10-sm120", {cu130_sm120}},
            {"cu130-torch2.10-sm90", {cu130}},  // no build of its own: the one for every GPU
            {"cu130-torch2.10", {cu130}},       // GPU unnamed: never a build for one GPU
            {"torch2.10-sm89", {cu130_sm89}},
            {"cu128", {cu128}},
            {"cu128-torch2.8-cxx11abi1", {cu12_abi}},
            {"cu126", {cu12_abi}},  // the CUDA-12-for-any-minor build
            {"torch2.9", {}},
            {"cpu", {}},  // the project exists: 200 with nothing to offer
        };
        for (const auto& [selector, files] : table) {
            CAPTURE(selector);
            const auto response = server.get("/variants/" + std::string(selector) + "/simple/flash-attn/?format=json");
            REQUIRE(response.result_int() == 200);
            CHECK(json_filenames(response) == files);
        }
        CHECK(json_filenames(server.get("/simple/flash-attn/?format=json")) ==
              std::set{cu128, cu130, cu130_sm89, cu130_sm120, cu12_abi});
    }
}

TEST_CASE("server: variant index addresses have one spelling and bad selectors say why", "[server][variants]") {
    test_server server;
    fill(server);
    struct row {
        std::string target;
        unsigned status;
        std::string location_or_phrase;
    };
    const row table[] = {
        {"/variants/torch2.10-cu130/simple/flash-attn/", 301, "/variants/cu130-torch2.10/simple/flash-attn/"},
        {"/variants/sm89-cu130-torch2.10/simple/Flash_Attn/?format=json", 301,
         "/variants/cu130-torch2.10-sm89/simple/Flash_Attn/?format=json"},
        {"/variants/CPU/simple/", 301, "/variants/cpu/simple/"},
        {"/%76ariants/torch2.10%2Dcu130/simple/einops/", 301, "/variants/cu130-torch2.10/simple/einops/"},
        {"/variants/cxx11abiTRUE-cu12/simple/", 301, "/variants/cu12-cxx11abi1/simple/"},
        {"/variants/cu130", 301, "/variants/cu130/simple/"},
        {"/variants/cu130/", 301, "/variants/cu130/simple/"},
        {"/variants/torch2.10-cu130", 301, "/variants/cu130-torch2.10/simple/"},
        {"/variants/cu130/simple", 301, "/variants/cu130/simple/"},
        {"/variants/cu130/simple/Flash_Attn/", 301, "/variants/cu130/simple/flash-attn/"},
        {"/variants/cu130/simple/flash-attn", 301, "/variants/cu130/simple/flash-attn/"},
        {"/variants/cu130/simple/flash-attn/", 200, ""},
        // What people copy (issue 16 item 3): a wheel's label, underscores, nvidia-smi's sm8.9,
        // torch.__version__, a dotted CUDA minor.
        {"/variants/cu130sm89torch2.10.0/simple/flash-attn/", 301, "/variants/cu130-torch2.10.0-sm89/simple/flash-attn/"},
        {"/variants/+cu130sm89torch2.10.0/simple/", 301, "/variants/cu130-torch2.10.0-sm89/simple/"},
        {"/variants/cu130sm89/simple/", 301, "/variants/cu130-sm89/simple/"},
        {"/variants/cu130_torch2.10/simple/", 301, "/variants/cu130-torch2.10/simple/"},
        {"/variants/cu130-sm8.9/simple/", 301, "/variants/cu130-sm89/simple/"},
        {"/variants/cu130-sm_89/simple/", 301, "/variants/cu130-sm89/simple/"},
        {"/variants/torch2.10.0+cu130/simple/", 301, "/variants/cu130-torch2.10.0/simple/"},
        {"/variants/torch2.10.0%2Bcu130/simple/", 301, "/variants/cu130-torch2.10.0/simple/"},
        {"/variants/cuda12.10/simple/", 301, "/variants/cu12.10/simple/"},
        {"/variants/cu130-sm90a/simple/", 301, "/variants/cu130-sm90/simple/"},  // a GPU is 9.0
        {"/variants/cu130/simple/nonexistent/", 404, "no project named 'nonexistent'"},
        {"/variants/cu130/simple/flash-attn/extra/", 404, "project pages are at /variants/cu130/simple/<project>/"},
        {"/variants/cu130/other/", 404, "variant indexes are at /variants/<selector>/simple/"},
        {"/variants/", 404, "variant indexes are at /variants/<selector>/simple/"},
        {"/variants", 404, "variant indexes are at"},
        {"/variants/banana/simple/", 404, "unknown variant selector word 'banana'; use one word each of: cuNNN"},
        {"/variants/cu130-banana/simple/flash-attn/", 404, "rocmX.Y (rocm6.4), cpu, xpu, torchX.Y[.Z]"},
        {"/variants/cu130sm89foo/simple/", 404, "written together as in a wheel's label"},
        {"/variants/cu130-sm100f/simple/", 400, "names a family of GPUs, not one"},
        {"/variants/cu130-cu128/simple/", 400, "names a CUDA version twice"},
        {"/variants/cu130-cpu/simple/", 400, "more than one of CUDA, ROCm, cpu and xpu"},
        {"/variants/cpu-sm89/simple/", 400, "SM architecture without CUDA"},
        {"/variants/cu130--torch2.10/simple/", 400, "has an empty word"},
        {"/variants/-cu130/simple/", 400, "has an empty word"},
        {"/variants/" + std::string(200, 'x') + "/simple/", 400, "longer than 120 characters"},
        {"/variants/cu130-" + std::string(150, '9') + "/simple/flash-attn/", 400, "longer than 120 characters"},
    };
    for (const auto& [target, status, expected] : table) {
        CAPTURE(target);
        const auto response = server.get(target);
        CHECK(response.result_int() == status);
        if (status == 301) CHECK(response[http::field::location] == expected);
        else if (!expected.empty()) CHECK_THAT(response.body(), Catch::Contains(expected));
    }
    CHECK(server.request(http::verb::post, "/variants/cu130/simple/flash-attn/").result_int() == 405);
    CHECK(server.request(http::verb::delete_, "/variants/banana/simple/").result_int() == 405);

    // Only the canonical index that answered 200 keeps pages; redirects and refusals keep none.
    const auto stats = server.pages().stats();
    CHECK(stats.variant_scopes == 1);
    CHECK(stats.entries == 1);
    // The dotted CUDA minor the redirect names is an index of its own.
    CHECK(server.get("/variants/cu12.10/simple/").result_int() == 200);
}

TEST_CASE("server: variant pages are cached like /simple/ pages and follow the catalog", "[server][variants]") {
    test_server server;
    fill(server);
    const std::string target = "/variants/cu130-torch2.10-sm89/simple/flash-attn/";

    const auto first = server.get(target);
    const auto misses = server.pages().stats().misses;
    const auto hits = server.pages().stats().hits;
    const auto again = server.get(target);
    CHECK(again.body() == first.body());
    CHECK(server.pages().stats().misses == misses);
    CHECK(server.pages().stats().hits == hits + 1);

    SECTION("ETag, 304 and HEAD, as on /simple/") {
        const std::string etag(first[http::field::etag]);
        CHECK(first[http::field::cache_control] == "max-age=60, public");
        CHECK(etag != server.get("/simple/flash-attn/")[http::field::etag]);
        const auto unchanged = server.get(target, {{http::field::if_none_match, etag}});
        CHECK(unchanged.result_int() == 304);
        CHECK(unchanged.body().empty());
        const auto head = server.request(http::verb::head, target);
        CHECK(head.result_int() == 200);
        CHECK(head[http::field::etag] == etag);
        CHECK(head[http::field::content_length] == std::to_string(first.body().size()));
        CHECK(head.body().empty());
    }
    SECTION("a new build changes the variant page at once") {
        const std::string newer = "flash_attn-2.8.4+cu130sm89torch2.10.0-cp312-cp312-linux_x86_64.whl";
        server.ingest(make_wheel("flash_attn", "2.8.4+cu130sm89torch2.10.0"), newer);
        const auto after = server.get(target);
        CHECK(after[http::field::etag] != first[http::field::etag]);
        CHECK_THAT(after.body(), Catch::Contains(newer));
        CHECK_THAT(after.body(), Catch::Contains(cu130_sm89));
        CHECK(server.get(target, {{http::field::if_none_match, std::string(first[http::field::etag])}}).result_int() ==
              200);
    }
    SECTION("a yank shows in the variant page at once") {
        REQUIRE(server.catalog().yank(cu130_sm89, "miscompiled for sm89", "admin"));
        CHECK_THAT(server.get(target).body(), Catch::Contains("data-yanked=\"miscompiled for sm89\""));
    }
    SECTION("a deleted best fit gives way to the next best") {
        REQUIRE(server.catalog().delete_file(cu130_sm89, "admin"));
        CHECK(json_filenames(server.get(target + "?format=json")) == std::set{cu130});
    }
}

TEST_CASE("server: the variant matrix API agrees with the pages it describes", "[server][variants][api]") {
    test_server server;
    fill(server);
    const auto response = server.get("/api/v1/projects/flash-attn/variants");
    REQUIRE(response.result_int() == 200);
    CHECK(response[http::field::content_type] == "application/json");
    const auto matrix = parse_json(response);
    CHECK(matrix.at("name") == "flash-attn");
    CHECK(matrix.at("display_name") == "flash_attn");
    CHECK(matrix.at("axes").at("sm") == boost::json::array{"8.9", "12.0"});
    CHECK(matrix.at("axes").at("cuda") == boost::json::array{"12", "12.8", "13.0"});
    const auto& versions = matrix.at("versions").as_array();
    REQUIRE(versions.size() == 1);
    CHECK(versions[0].at("version") == "2.8.3");
    const auto& builds = versions[0].at("builds").as_array();
    REQUIRE(builds.size() == 5);

    // /simple/'s "_variant" is the same decoding, file by file
    const auto simple = parse_json(server.get("/simple/flash-attn/?format=json"));
    std::map<std::string, boost::json::value> simple_variants;
    for (const auto& file : simple.at("files").as_array())
        simple_variants[std::string(file.at("filename").as_string())] = file.at("_variant");

    std::set<std::string> reached_sm89;
    for (const auto& item : builds) {
        const auto& build = item.as_object();
        const std::string filename(build.at("filename").as_string());
        CAPTURE(filename);
        CHECK(build.at("variant") == simple_variants.at(filename));
        CHECK(server.get(std::string(build.at("url").as_string())).result_int() == 200);
        const auto& selectors = build.at("selectors").as_array();
        CHECK_FALSE(selectors.empty());
        // each selector it names really lists it
        for (const auto& selector : selectors) {
            const std::string name(selector.as_string());
            CAPTURE(name);
            CHECK(json_filenames(server.get("/variants/" + name + "/simple/flash-attn/?format=json")).count(filename) == 1);
            if (filename == cu130_sm89) reached_sm89.insert(name);
        }
    }
    CHECK(reached_sm89 == std::set<std::string>{"cu13-torch2.10-sm89", "cu130-torch2.10-sm89", "cu13-sm89", "cu130-sm89",
                                                "torch2.10-sm89", "sm89"});

    const auto pure = parse_json(server.get("/api/v1/projects/einops/variants"));
    const auto& einops_build = pure.at("versions").at(0).at("builds").at(0);
    CHECK(einops_build.at("variant") == boost::json::object{});
    CHECK(einops_build.at("selectors") == boost::json::array{});

    SECTION("names are looked up normalised; what is not there is 404") {
        CHECK(server.get("/api/v1/projects/Flash_Attn/variants").body() == response.body());
        CHECK(server.get("/api/v1/projects/flash-attn/variants/").body() == response.body());
        struct row {
            const char* target;
            unsigned status;
            const char* phrase;
        };
        const row table[] = {
            {"/api/v1/projects/nonexistent/variants", 404, "no project named 'nonexistent'"},
            {"/api/v1/projects/-bad-/variants", 404, "not a valid project name"},
            // /api/v1/projects/<project> is the admin catalog's project (admin_api_test.cpp).
            {"/api/v1/projects/flash-attn", 200, "\"versions\":"},
            {"/api/v1/projects/flash-attn/versions", 404, "no such API route"},
            {"/api/v1/", 404, "no such API route"},
            {"/api/v2/projects/flash-attn/variants", 404, "no such API route"},
            {"/api", 404, "no such API route"},
        };
        for (const auto& [target, status, phrase] : table) {
            CAPTURE(target);
            const auto answer = server.get(target);
            CHECK(answer.result_int() == status);
            CHECK_THAT(answer.body(), Catch::Contains(phrase));
        }
        const auto post = server.request(http::verb::post, "/api/v1/projects/flash-attn/variants");
        CHECK(post.result_int() == 405);
        CHECK(post[http::field::allow] == "GET, HEAD");
    }
    SECTION("validators, and always current") {
        const std::string etag(response[http::field::etag]);
        CHECK(response[http::field::cache_control] == "no-cache");
        CHECK(server.get("/api/v1/projects/flash-attn/variants", {{http::field::if_none_match, etag}}).result_int() == 304);
        server.ingest(make_wheel("flash_attn", "2.8.2+cu128torch2.8"),
                      "flash_attn-2.8.2+cu128torch2.8-cp312-cp312-linux_x86_64.whl");
        const auto after = server.get("/api/v1/projects/flash-attn/variants", {{http::field::if_none_match, etag}});
        CHECK(after.result_int() == 200);
        CHECK(parse_json(after).at("versions").as_array().size() == 2);
    }
}
