#include <catch2/catch.hpp>

#include "wheelhouse/remote/github_release.hpp"

using namespace wheelhouse;
using namespace wheelhouse::remote;

TEST_CASE("github_release: a release and its assets, digests included", "[github_release]") {
    const auto json = R"({"id": 123, "tag_name": "v2.8.3", "name": "x", "assets": [
        {"id": 7, "name": "flash_attn-2.8.3-cp312-cp312-linux_x86_64.whl", "size": 255000000,
         "browser_download_url": "https://github.com/Dao-AILab/flash-attention/releases/download/v2.8.3/flash_attn-2.8.3-cp312-cp312-linux_x86_64.whl",
         "digest": "sha256:ABCDEF0123456789abcdef0123456789abcdef0123456789abcdef0123456789", "state": "uploaded"},
        {"id": 8, "name": "notes.txt", "size": 10, "browser_download_url": "https://github.com/o/r/releases/download/v1/notes.txt",
         "digest": null},
        {"id": 9, "name": "a.whl", "size": 10, "browser_download_url": "https://x/a.whl", "digest": "sha512:00"}]})";
    auto parsed = parse_release(json);
    REQUIRE(parsed);
    CHECK(parsed->id == 123);
    CHECK(parsed->tag == "v2.8.3");
    REQUIRE(parsed->assets.size() == 3);
    CHECK(parsed->assets[0].id == 7);
    CHECK(parsed->assets[0].size == 255000000);
    CHECK(parsed->assets[0].sha256 == "abcdef0123456789abcdef0123456789abcdef0123456789abcdef0123456789");
    CHECK_FALSE(parsed->assets[1].sha256);
    CHECK_FALSE(parsed->assets[2].sha256);

    CHECK_FALSE(parse_release("not json"));
    CHECK_THAT(parse_release("not json").error().message, Catch::Contains("not JSON"));
    CHECK(parse_release("{\"id\": 1}").error().kind == error_kind::upstream);
    auto list = parse_assets(R"([{"id": 1, "name": "a", "size": 3, "browser_download_url": "https://h/a"}])");
    REQUIRE(list);
    CHECK(list->size() == 1);
    CHECK_FALSE(parse_assets(R"([{"id": 1}])"));
}

TEST_CASE("github_release: sha256 digests", "[github_release]") {
    const std::string hex(64, 'a');
    CHECK(parse_sha256_digest("sha256:" + hex) == hex);
    CHECK(parse_sha256_digest("SHA256:" + std::string(64, 'F')) == std::string(64, 'f'));
    CHECK_FALSE(parse_sha256_digest("sha256:" + hex.substr(1)));
    CHECK_FALSE(parse_sha256_digest("sha256:" + std::string(63, 'a') + "g"));
    CHECK_FALSE(parse_sha256_digest("sha1:" + hex));
    CHECK_FALSE(parse_sha256_digest(""));
}

TEST_CASE("github_release: the Link header's next page", "[github_release]") {
    CHECK(next_page_url(R"(<https://api.github.com/repositories/1/releases/2/assets?per_page=100&page=2>; rel="next", <https://api.github.com/repositories/1/releases/2/assets?per_page=100&page=5>; rel="last")") ==
          "https://api.github.com/repositories/1/releases/2/assets?per_page=100&page=2");
    CHECK(next_page_url(R"(<https://h/a?page=1>; rel="prev", <https://h/a?page=3>; rel="next")") == "https://h/a?page=3");
    CHECK(next_page_url(R"(<https://h/a?page=3>; REL=next)") == "https://h/a?page=3");
    CHECK(next_page_url(R"(<https://h/a?page=3>; rel="prev next")") == "https://h/a?page=3");
    CHECK_FALSE(next_page_url(R"(<https://h/a?page=1>; rel="prev", <https://h/a?page=1>; rel="first")"));
    CHECK_FALSE(next_page_url(R"(<https://h/a?page=1>; rel="nextish")"));
    CHECK_FALSE(next_page_url(""));
    CHECK_FALSE(next_page_url("garbage <"));
}

TEST_CASE("github_release: repositories and release download URLs", "[github_release]") {
    auto repository = parse_repository("Dao-AILab/flash-attention");
    REQUIRE(repository);
    CHECK(repository->owner == "Dao-AILab");
    CHECK(repository->name == "flash-attention");
    for (auto bad : {"", "owner", "/repo", "owner/", "a/b/c", "o w/r", "../r", "o/.."}) {
        INFO(bad);
        auto refused = parse_repository(bad);
        REQUIRE_FALSE(refused);
        CHECK_THAT(refused.error().message, Catch::Contains("give it as OWNER/REPO"));
    }

    auto download = parse_release_download_url(
        "https://github.com/o/r/releases/download/v1.0%2Bcu12/demo-1.0%2Bcu12-py3-none-any.whl", "https://api.github.com");
    REQUIRE(download);
    CHECK(download->repository.owner == "o");
    CHECK(download->repository.name == "r");
    CHECK(download->tag == "v1.0+cu12");
    CHECK(download->filename == "demo-1.0+cu12-py3-none-any.whl");
    // GitHub Enterprise and the tests' fake: the API on the same host.
    CHECK(parse_release_download_url("https://127.0.0.1:8443/o/r/releases/download/t/f.whl", "https://127.0.0.1:8443/api/v3"));
    CHECK_FALSE(parse_release_download_url("https://127.0.0.1:8444/o/r/releases/download/t/f.whl", "https://127.0.0.1:8443"));
    CHECK_FALSE(parse_release_download_url("https://example.com/o/r/releases/download/t/f.whl", "https://api.github.com"));
    CHECK_FALSE(parse_release_download_url("https://github.com/o/r/releases/tag/t/f.whl", "https://api.github.com"));
    CHECK_FALSE(parse_release_download_url("https://github.com/o/r/releases/download/f.whl", "https://api.github.com"));

    CHECK(url_filename("https://h/a/demo-1.0%2Bx-py3-none-any.whl?x=1").value() == "demo-1.0+x-py3-none-any.whl");
    CHECK_FALSE(url_filename("https://h/a/"));
    CHECK_FALSE(url_filename("not a url"));

    CHECK(release_by_tag_url("https://api.github.com/", *repository, "v1+cu 12") ==
          "https://api.github.com/repos/Dao-AILab/flash-attention/releases/tags/v1%2Bcu%2012");
    CHECK(release_assets_url("https://h/api/v3", *repository, 42) ==
          "https://h/api/v3/repos/Dao-AILab/flash-attention/releases/42/assets?per_page=100");
    CHECK(release_asset_api_url("https://api.github.com", *repository, 7) ==
          "https://api.github.com/repos/Dao-AILab/flash-attention/releases/assets/7");
}
