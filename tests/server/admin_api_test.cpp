#include <catch2/catch.hpp>

#include <set>
#include <string>
#include <thread>

#include <boost/json.hpp>

#include "test_server.hpp"
#include "wheelhouse/auth/token_store.hpp"

using namespace wheelhouse;
using namespace wheelhouse::testing;

namespace {

const std::string cu128 = "flash_attn-2.8.3+cu128torch2.8-cp312-cp312-linux_x86_64.whl";
const std::string cu130_sm89 = "flash_attn-2.8.3+cu130sm89torch2.10.0-cp312-cp312-linux_x86_64.whl";
const std::string free_threaded = "flash_attn-2.8.3+cu130sm89torch2.10.0-cp314-cp314t-linux_x86_64.whl";
const std::string older = "flash_attn-2.7.4-cp312-cp312-linux_x86_64.whl";
const std::string einops = "einops-0.8.1-py3-none-any.whl";

std::string version_of(const std::string& filename) {
    const auto first = filename.find('-') + 1;
    return filename.substr(first, filename.find('-', first) - first);
}

void fill(test_server& server) {
    for (const auto& name : {cu128, cu130_sm89, free_threaded})
        server.ingest(make_wheel("flash_attn", version_of(name), "Flash attention", ">=3.9"), name);
    server.ingest(make_wheel("flash_attn", "2.7.4", "Old flash attention", ">=3.8"), older);
    server.ingest(make_wheel("einops", "0.8.1", "Tensor ops"), einops);
}

boost::json::object parse_json(const http_response& response) {
    INFO(response.body());
    return boost::json::parse(response.body()).as_object();
}

std::string error_of(const http_response& response) {
    CHECK(response[http::field::content_type] == "application/json");
    return std::string(parse_json(response).at("error").as_string());
}

// A token's secret, as `wheelhouse token create` would print it.
std::string make_token(test_server& server, std::string_view name, auth::scope scope,
                       std::vector<std::string> projects = {}) {
    auth::token_store tokens(server.catalog());
    auto created = tokens.create(name, scope, projects, std::nullopt, "test");
    REQUIRE(created);
    return created->secret;
}

std::string bearer(const std::string& secret) { return "Bearer " + secret; }

}  // namespace

TEST_CASE("admin api: the project list searches normalised names, sorts and pages", "[server][admin]") {
    test_server server;
    fill(server);

    const auto found = server.get("/api/v1/projects?q=Flash_Attn");
    REQUIRE(found.result_int() == 200);
    CHECK(found[http::field::content_type] == "application/json");
    CHECK(found[http::field::cache_control] == "no-store");
    const auto page = parse_json(found);
    CHECK(page.at("total") == 1);
    CHECK(page.at("query") == "flash-attn");
    const auto& project = page.at("projects").as_array().at(0).as_object();
    CHECK(project.at("name") == "flash-attn");
    CHECK(project.at("display_name") == "flash_attn");
    CHECK(project.at("latest_version") == "2.8.3");
    CHECK(project.at("file_count") == 4);
    CHECK(project.at("status") == "active");

    const auto second = parse_json(server.get("/api/v1/projects?per_page=1&page=2"));
    CHECK(second.at("total") == 2);
    CHECK(second.at("pages") == 2);
    CHECK(second.at("projects").as_array().at(0).at("name") == "flash-attn");
    const auto by_files = parse_json(server.get("/api/v1/projects/?sort=files"));
    CHECK(by_files.at("projects").as_array().at(0).at("name") == "flash-attn");

    const auto bad_sort = server.get("/api/v1/projects?sort=popular");
    CHECK(bad_sort.result_int() == 400);
    CHECK(error_of(bad_sort) == "sort 'popular' is not one of name, recent, files, size");
    const auto bad_page = server.get("/api/v1/projects?per_page=1000");
    CHECK(bad_page.result_int() == 400);
    CHECK(error_of(bad_page) == "'per_page' is '1000'; give a whole number from 1 to 200");
    CHECK(server.request(http::verb::post, "/api/v1/projects").result_int() == 405);
}

TEST_CASE("admin api: the project list filters by the builds a project has, or lacks", "[server][admin]") {
    test_server server;
    fill(server);
    auto names = [&](const std::string& target, const std::string& authorization = {}) {
        http_response response = authorization.empty()
                                     ? server.get(target)
                                     : server.get(target, {{http::field::authorization, authorization}});
        REQUIRE(response.result_int() == 200);
        const auto page = parse_json(response);
        std::vector<std::string> out;
        for (const auto& project : page.at("projects").as_array()) out.emplace_back(project.at("name").as_string());
        return out;
    };
    using list = std::vector<std::string>;
    CHECK(names("/api/v1/projects?cuda=cu130") == list{"flash-attn"});
    CHECK(names("/api/v1/projects?cuda=13.0&lacks=1") == list{"einops"});
    CHECK(names("/api/v1/projects?torch=2.10&sm=sm8.9") == list{"flash-attn"});
    CHECK(names("/api/v1/projects?sm=sm120").empty());
    CHECK(names("/api/v1/projects?python=3.14t") == list{"einops", "flash-attn"});  // einops is pure
    CHECK(names("/api/v1/projects?python=cp313&lacks=true") == list{"flash-attn"});
    const auto filtered = parse_json(server.get("/api/v1/projects?cuda=cuda13.0&torch=torch2.10.0&lacks=1"));
    CHECK(filtered.at("filters") == boost::json::object{{"cuda", "cu130"}, {"torch", "torch2.10"}, {"sm", nullptr},
                                                        {"rocm", nullptr}, {"python", nullptr}, {"kind", nullptr}, {"lacks", true}});
    CHECK(filtered.at("total") == 1);

    const auto wrong_axis = server.get("/api/v1/projects?cuda=torch2.10");
    CHECK(wrong_axis.result_int() == 400);
    CHECK(error_of(wrong_axis) == "cuda 'torch2.10' is not one cuda word; give one such as cu130, cu12 or 13.0");
    CHECK(error_of(server.get("/api/v1/projects?lacks=maybe")) ==
          "lacks is 'maybe'; give lacks=1 for the projects without such a build");
    CHECK(error_of(server.get("/api/v1/projects?lacks=1")) ==
          "lacks needs something to lack: give cuda, torch, sm, rocm, python or kind beside it");

    // The words the filters offer, as the builds name them.
    const auto words = parse_json(server.get("/api/v1/variants"));
    CHECK(words.at("cuda") == boost::json::array{"cu128", "cu130"});
    CHECK(words.at("torch") == boost::json::array{"torch2.8", "torch2.10"});
    CHECK(words.at("sm") == boost::json::array{"sm89"});
    CHECK(words.at("rocm") == boost::json::array{});
    CHECK(words.at("python") == boost::json::array{"cp312", "cp314t"});
}

TEST_CASE("admin api: on a private index the filters and their words show a limited token only its projects",
          "[server][admin]") {
    server_settings settings;
    settings.app.private_index = true;
    test_server server(settings);
    fill(server);
    server.ingest(make_wheel("vllm_rocm", "0.9.0+rocm6.4torch2.8"), "vllm_rocm-0.9.0+rocm6.4torch2.8-cp312-cp312-linux_x86_64.whl");
    const auto limited = bearer(make_token(server, "rocm-team", auth::scope::read, {"vllm-*"}));
    const auto everyone = bearer(make_token(server, "team", auth::scope::read));
    CHECK(server.get("/api/v1/projects?cuda=cu130").result_int() == 401);
    CHECK(server.get("/api/v1/variants").result_int() == 401);
    auto total = [&](const std::string& target, const std::string& authorization) {
        const auto response = server.get(target, {{http::field::authorization, authorization}});
        REQUIRE(response.result_int() == 200);
        return parse_json(response).at("total").as_int64();
    };
    CHECK(total("/api/v1/projects?cuda=cu130", everyone) == 1);
    CHECK(total("/api/v1/projects?cuda=cu130", limited) == 0);
    CHECK(total("/api/v1/projects?cuda=cu130&lacks=1", everyone) == 2);
    CHECK(total("/api/v1/projects?cuda=cu130&lacks=1", limited) == 1);  // vllm-rocm, not einops
    CHECK(total("/api/v1/projects?rocm=6.4", limited) == 1);
    const auto words = parse_json(server.get("/api/v1/variants", {{http::field::authorization, limited}}));
    CHECK(words.at("cuda") == boost::json::array{});
    CHECK(words.at("rocm") == boost::json::array{"rocm6.4"});
}

TEST_CASE("admin api: a project has its releases newest first with the matrix and METADATA", "[server][admin]") {
    test_server server;
    fill(server);
    const auto response = server.get("/api/v1/projects/Flash_Attn");
    REQUIRE(response.result_int() == 200);
    const auto project = parse_json(response);
    CHECK(project.at("name") == "flash-attn");
    CHECK(project.at("summary") == "Flash attention");
    CHECK(project.at("requires_python") == ">=3.9");
    CHECK(project.at("latest_version") == "2.8.3");
    CHECK(project.at("file_count") == 4);
    CHECK(project.at("status_reason").is_null());
    const auto& versions = project.at("versions").as_array();
    REQUIRE(versions.size() == 2);
    CHECK(versions[0].at("version") == "2.8.3");
    CHECK(versions[1].at("version") == "2.7.4");
    std::set<std::string> abis;
    for (const auto& build : versions[0].at("builds").as_array()) abis.insert(std::string(build.at("abi_tag").as_string()));
    CHECK(abis == std::set<std::string>{"cp312", "cp314t"});
    CHECK(project.at("axes").at("python") == boost::json::array{"cp312", "cp314"});

    const auto missing = server.get("/api/v1/projects/nope");
    CHECK(missing.result_int() == 404);
    CHECK(error_of(missing) == "no project named 'nope' in this index");
    CHECK(error_of(server.get("/api/v1/projects/-bad-")) == "'-bad-' is not a valid project name (PEP 508)");
    // The variants route of api_routes is still there beside these.
    CHECK(server.get("/api/v1/projects/flash-attn/variants").result_int() == 200);
}

TEST_CASE("admin api: a file has its details, METADATA text and downloads per day", "[server][admin]") {
    test_server server;
    fill(server);
    const auto file = parse_json(server.get("/api/v1/files/" + cu130_sm89));
    CHECK(file.at("filename").as_string() == cu130_sm89);
    CHECK(file.at("project") == "flash-attn");
    CHECK(file.at("uploaded_by") == "test");
    CHECK(file.at("yanked") == false);
    CHECK(file.at("variant") == boost::json::object{{"cuda", "13.0"}, {"sm", "8.9"}, {"torch", "2.10.0"}});
    CHECK(file.at("location").at("mode") == "local");
    const std::string url(file.at("location").at("url").as_string());
    CHECK_THAT(std::string(file.at("metadata").at("text").as_string()), Catch::Contains("Summary: Flash attention\n"));
    CHECK(file.at("downloads").at("total") == 0);

    CHECK(server.get(url).result_int() == 200);
    CHECK(server.get(url, {{http::field::range, "bytes=0-9"}}).result_int() == 206);
    CHECK(server.get(url, {{http::field::range, "bytes=10-19"}}).result_int() == 206);  // a resumed chunk
    CHECK(server.request(http::verb::head, url).result_int() == 200);                 // not a download
    CHECK(server.get(url + ".metadata").result_int() == 200);                          // nor is metadata
    // Counted in memory and written about once a second.
    std::int64_t total = 0;
    for (int attempt = 0; attempt < 50 && total != 2; ++attempt) {
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        total = parse_json(server.get("/api/v1/files/" + cu130_sm89)).at("downloads").at("total").as_int64();
    }
    CHECK(total == 2);
    const auto again = parse_json(server.get("/api/v1/files/" + cu130_sm89));
    CHECK(again.at("downloads").at("days").as_array().size() == 1);

    const auto missing = server.get("/api/v1/files/nope-1.0-py3-none-any.whl");
    CHECK(missing.result_int() == 404);
    CHECK(error_of(missing) ==
          "no file named nope-1.0-py3-none-any.whl in this index; it may have been deleted since the page was loaded");
}

TEST_CASE("admin api: curation is refused without an admin token, by the API itself", "[server][admin]") {
    test_server server;
    fill(server);
    const auto upload_token = make_token(server, "ci", auth::scope::upload);
    const auto einops_admin = make_token(server, "einops-admin", auth::scope::admin, {"einops"});
    const std::string yank = "/api/v1/files/" + cu128 + "/yank";

    const auto anonymous = server.request(http::verb::post, yank, {}, R"({"reason": "x"})");
    CHECK(anonymous.result_int() == 401);
    CHECK(anonymous[http::field::www_authenticate] == "Bearer realm=\"wheelhouse\"");
    CHECK_THAT(error_of(anonymous), Catch::StartsWith("yanks need an API token: send 'Authorization: Bearer <token>'"));

    const auto wrong = server.request(http::verb::post, yank, {{http::field::authorization, bearer("wh_nonsense")}});
    CHECK(wrong.result_int() == 401);

    const auto low = server.request(http::verb::post, yank, {{http::field::authorization, bearer(upload_token)}});
    CHECK(low.result_int() == 403);
    CHECK(error_of(low) == "token 'ci' has scope upload; yanks need admin");

    const auto elsewhere = server.request(http::verb::delete_, "/api/v1/files/" + cu128,
                                          {{http::field::authorization, bearer(einops_admin)}});
    CHECK(elsewhere.result_int() == 403);
    CHECK(error_of(elsewhere) == "token 'einops-admin' may not change project 'flash-attn'");
    const auto tokens = server.get("/api/v1/tokens", {{http::field::authorization, bearer(einops_admin)}});
    CHECK(tokens.result_int() == 403);
    CHECK(error_of(tokens) ==
          "token 'einops-admin' is limited to some projects; token lists and changes need an admin token for every project");

    CHECK(server.get("/api/v1/audit").result_int() == 401);
    CHECK(server.get("/api/v1/tokens", {{http::field::authorization, bearer(upload_token)}}).result_int() == 403);
    CHECK(server.request(http::verb::put, "/api/v1/projects/einops/status", {}, R"({"status": "archived"})")
              .result_int() == 401);
    // Nothing changed.
    CHECK(parse_json(server.get("/api/v1/files/" + cu128)).at("yanked") == false);
    // The raw upload route is still the uploads' own, with its own message.
    const auto upload = server.request(http::verb::put, "/api/v1/files/" + einops, {}, "bytes");
    CHECK(upload.result_int() == 401);
    CHECK_THAT(upload.body(), Catch::Contains("uploads need an API token"));
}

TEST_CASE("admin api: yank, un-yank, delete and status, each in the audit log", "[server][admin]") {
    test_server server;
    fill(server);
    const auto admin = make_token(server, "alice", auth::scope::admin);
    const http::field authorization = http::field::authorization;
    auto as_admin = [&](http::verb method, const std::string& target, std::string body = {}) {
        return server.request(method, target, {{authorization, bearer(admin)}}, std::move(body));
    };

    const auto yanked = as_admin(http::verb::post, "/api/v1/files/" + cu128 + "/yank", R"({"reason": "segfaults on sm120"})");
    REQUIRE(yanked.result_int() == 200);
    CHECK(parse_json(yanked).at("yanked") == "segfaults on sm120");
    const auto simple = server.get("/simple/flash-attn/", {{http::field::accept, "application/vnd.pypi.simple.v1+json"}});
    CHECK_THAT(simple.body(), Catch::Contains("\"yanked\":\"segfaults on sm120\""));

    const auto unyanked = as_admin(http::verb::post, "/api/v1/files/" + cu128 + "/unyank", R"({"reason": "fixed"})");
    REQUIRE(unyanked.result_int() == 200);
    CHECK(parse_json(unyanked).at("yanked") == false);

    const auto bad_body = as_admin(http::verb::post, "/api/v1/files/" + cu128 + "/yank", "{reason");
    CHECK(bad_body.result_int() == 400);
    CHECK_THAT(error_of(bad_body), Catch::StartsWith("the body is not JSON"));
    const auto bad_reason = as_admin(http::verb::post, "/api/v1/files/" + cu128 + "/yank", R"({"reason": 5})");
    CHECK(error_of(bad_reason) == "'reason' must be a string");

    const auto file = parse_json(server.get("/api/v1/files/" + older));
    const std::string sha256(file.at("sha256").as_string());
    REQUIRE(std::filesystem::exists(server.blobs().blob_path(sha256)));
    const auto deleted = as_admin(http::verb::delete_, "/api/v1/files/" + older);
    REQUIRE(deleted.result_int() == 200);
    CHECK(parse_json(deleted).at("blob_removed") == true);
    CHECK_FALSE(std::filesystem::exists(server.blobs().blob_path(sha256)));
    // A page loaded before the delete acts on a file that is gone: a clear 404.
    for (const auto& [method, target] : {std::pair{http::verb::delete_, "/api/v1/files/" + older},
                                         std::pair{http::verb::post, "/api/v1/files/" + older + "/yank"}}) {
        const auto stale = as_admin(method, target);
        CHECK(stale.result_int() == 404);
        CHECK(error_of(stale) == "no file named " + older +
                                     " in this index; it may have been deleted since the page was loaded");
    }

    const auto status = as_admin(http::verb::put, "/api/v1/projects/Flash_Attn/status",
                                 R"({"status": "deprecated", "reason": "use flash-attn-3"})");
    REQUIRE(status.result_int() == 200);
    CHECK(parse_json(status).at("status") == "deprecated");
    CHECK(parse_json(server.get("/api/v1/projects/flash-attn")).at("status_reason") == "use flash-attn-3");
    const auto bad_status = as_admin(http::verb::post, "/api/v1/projects/flash-attn/status", R"({"status": "gone"})");
    CHECK(bad_status.result_int() == 400);
    CHECK(error_of(bad_status) == "status 'gone' is not one of active, archived, quarantined, deprecated (PEP 792)");
    CHECK(as_admin(http::verb::put, "/api/v1/projects/nope/status", R"({"status": "archived"})").result_int() == 404);

    const auto audit = as_admin(http::verb::get, "/api/v1/audit?limit=10");
    REQUIRE(audit.result_int() == 200);
    std::vector<std::string> actions;
    const auto log = parse_json(audit);
    for (const auto& entry : log.at("entries").as_array()) {
        if (entry.at("actor") != "alice") continue;
        actions.emplace_back(entry.at("action").as_string());
    }
    CHECK(actions == std::vector<std::string>{"set_status", "delete_file", "unyank", "yank"});
    const auto history = parse_json(server.get("/api/v1/files/" + cu128)).at("history").as_array();
    REQUIRE(history.size() >= 2);
    CHECK(history[0].at("action") == "unyank");
    CHECK(history[0].at("detail") == "fixed");
    CHECK(as_admin(http::verb::get, "/api/v1/audit?limit=0").result_int() == 400);

    // Pages, an action filter, and a short hash as the page shows it finds the upload.
    const auto second = parse_json(as_admin(http::verb::get, "/api/v1/audit?per_page=2&page=2"));
    CHECK(second.at("page") == 2);
    CHECK(second.at("per_page") == 2);
    const auto total = second.at("total").as_int64();
    CHECK(total >= 9);  // five uploads, four changes
    CHECK(second.at("pages") == (total + 1) / 2);
    CHECK(second.at("entries").as_array().size() == 2);
    CHECK(second.at("entries").at(0).at("action") == "unyank");  // after set_status, delete_file
    const auto yanks = parse_json(as_admin(http::verb::get, "/api/v1/audit?action=yank&actor=alice"));
    CHECK(yanks.at("total") == 1);
    CHECK(yanks.at("actions").as_array().size() >= 5);
    const auto by_hash = parse_json(as_admin(http::verb::get, "/api/v1/audit?q=" + sha256.substr(0, 12)));
    CHECK(by_hash.at("entries").at(0).at("action") == "delete_file");
    CHECK(by_hash.at("entries").at(1).at("action") == "add_file");
    CHECK(error_of(as_admin(http::verb::get, "/api/v1/audit?page=0")) ==
          "'page' is '0'; give a whole number from 1 to 1000000000");
}

TEST_CASE("admin api: tokens are created with their secret once, listed without it, revoked", "[server][admin]") {
    test_server server;
    const auto admin = make_token(server, "root", auth::scope::admin);
    auto as_admin = [&](http::verb method, const std::string& target, std::string body = {}) {
        return server.request(method, target, {{http::field::authorization, bearer(admin)}}, std::move(body));
    };
    const auto created = as_admin(http::verb::post, "/api/v1/tokens",
                                  R"({"name": "ci-einops", "scope": "upload", "projects": ["Einops"], "expires_in_days": 30})");
    REQUIRE(created.result_int() == 201);
    const auto answer = parse_json(created);
    const std::string secret(answer.at("secret").as_string());
    CHECK(answer.at("token").at("projects") == boost::json::array{"einops"});
    CHECK(answer.at("token").at("scope") == "upload");
    CHECK_FALSE(answer.at("token").at("expires").is_null());

    // The new token works for what it may do, and no more.
    const auto upload = server.request(http::verb::put, "/api/v1/files/" + einops,
                                       {{http::field::authorization, bearer(secret)}}, make_wheel("einops", "0.8.1"));
    CHECK(upload.result_int() == 201);
    CHECK(server.get("/api/v1/tokens", {{http::field::authorization, bearer(secret)}}).result_int() == 403);

    const auto listed = as_admin(http::verb::get, "/api/v1/tokens");
    REQUIRE(listed.result_int() == 200);
    CHECK(listed.body().find(secret) == std::string::npos);
    std::set<std::string> names;
    const auto list = parse_json(listed);
    for (const auto& token : list.at("tokens").as_array()) {
        CHECK_FALSE(token.as_object().contains("secret"));
        names.insert(std::string(token.at("name").as_string()));
    }
    CHECK(names == std::set<std::string>{"root", "ci-einops"});

    const auto taken = as_admin(http::verb::post, "/api/v1/tokens", R"({"name": "ci-einops"})");
    CHECK(taken.result_int() == 409);
    CHECK(as_admin(http::verb::post, "/api/v1/tokens", R"({"name": "x", "scope": "god"})").result_int() == 400);
    CHECK(error_of(as_admin(http::verb::post, "/api/v1/tokens", "{}")) ==
          "give the token a name: {\"name\": \"ci-flash-attn\", \"scope\": \"upload\"}");

    const auto revoked = as_admin(http::verb::delete_, "/api/v1/tokens/ci-einops");
    REQUIRE(revoked.result_int() == 200);
    CHECK(parse_json(revoked).at("usable") == false);
    CHECK(server.request(http::verb::put, "/api/v1/files/" + einops, {{http::field::authorization, bearer(secret)}},
                         make_wheel("einops", "0.8.1"))
              .result_int() == 401);
    CHECK(as_admin(http::verb::delete_, "/api/v1/tokens/nobody").result_int() == 404);
}

TEST_CASE("static: the admin page at / with its types, validators and policy", "[server][static]") {
    test_server server;
    const auto page = server.get("/");
    REQUIRE(page.result_int() == 200);
    CHECK(page[http::field::content_type] == "text/html; charset=utf-8");
    CHECK_THAT(page.body(), Catch::Contains("<script type=\"module\" src=\"/static/js/app.mjs\"></script>"));
    const std::string policy(page["Content-Security-Policy"]);
    CHECK_THAT(policy, Catch::Contains("script-src 'self'"));
    CHECK_THAT(policy, !Catch::Contains("unsafe-inline"));
    CHECK(page["X-Content-Type-Options"] == "nosniff");
    CHECK(page[http::field::cache_control] == "no-cache");
    const std::string etag(page[http::field::etag]);
    REQUIRE_FALSE(etag.empty());

    const auto again = server.get("/", {{http::field::if_none_match, etag}});
    CHECK(again.result_int() == 304);
    CHECK(again.body().empty());
    CHECK(std::string(again["Content-Security-Policy"]) == policy);

    const auto script = server.get("/static/js/app.mjs");
    REQUIRE(script.result_int() == 200);
    CHECK(script[http::field::content_type] == "text/javascript; charset=utf-8");
    CHECK(server.get("/static/app.css")[http::field::content_type] == "text/css; charset=utf-8");
    CHECK(std::string(script[http::field::etag]) != etag);

    const auto missing = server.get("/static/js/nope.mjs");
    CHECK(missing.result_int() == 404);
    CHECK_THAT(missing.body(), Catch::Contains("no file static/js/nope.mjs"));
    CHECK(server.request(http::verb::post, "/").result_int() == 405);
    CHECK(server.request(http::verb::head, "/").result_int() == 200);
    // pip's index is where it was.
    CHECK(server.get("/simple/").result_int() == 200);
}
