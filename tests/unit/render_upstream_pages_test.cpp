// An upstream page as this index serves it: what it links, what it declares, and that reading
// it back (as pip would, with the index's own page reader) gives the same files.

#include <catch2/catch.hpp>

#include <boost/json.hpp>

#include "wheelhouse/render/upstream_pages.hpp"

using namespace wheelhouse;
using namespace wheelhouse::upstream;

namespace {

upstream_file file(std::string filename, char digest, std::optional<std::uint64_t> size = std::nullopt) {
    upstream_file out;
    out.filename = std::move(filename);
    out.url = "https://files.example/packages/" + out.filename;
    out.sha256 = std::string(64, digest);
    out.size = size;
    return out;
}

project_page torch_page() {
    project_page page;
    page.project = "torch";
    page.api_version = "1.3";
    page.versions = {"2.7.1+cu128", "2.8.0+cu128"};
    page.versions_listed = true;
    auto linux = file("torch-2.8.0+cu128-cp312-cp312-manylinux_2_28_x86_64.whl", 'a', 900'000'000);
    linux.requires_python = ">=3.9.0";
    linux.metadata_sha256 = std::string(64, 'b');
    linux.upload_time = "2025-08-06T12:00:00.123456Z";
    linux.provenance = "https://pypi.example/integrity/torch/2.8.0/" + linux.filename + "/provenance";
    auto windows = file("torch-2.7.1+cu128-cp312-cp312-win_amd64.whl", 'c', 2'500'000'000);
    windows.yanked_reason = "<script>alert(1)</script>";
    page.files = {linux, windows};
    return page;
}

page_source source_of(page_format format) { return {"torch", "https://wheels.example/simple/torch/", format}; }

void same_files(const project_page& read, const project_page& written, bool sizes) {
    REQUIRE(read.files.size() == written.files.size());
    for (std::size_t i = 0; i < read.files.size(); ++i) {
        const auto& a = read.files[i];
        const auto& b = written.files[i];
        CHECK(a.filename == b.filename);
        CHECK(a.sha256 == b.sha256);
        CHECK(a.requires_python == b.requires_python);
        CHECK(a.yanked_reason == b.yanked_reason);
        CHECK(a.metadata_sha256 == b.metadata_sha256);
        CHECK(a.provenance == b.provenance);
        if (sizes) {
            CHECK(a.size == b.size);
            CHECK(a.upload_time == b.upload_time);
        }
    }
    CHECK(read.left_out == 0);
}

}  // namespace

TEST_CASE("upstream pages: files link to this index, which checks and keeps them, or to upstream as they are",
          "[render][upstream]") {
    const auto page = torch_page();
    const auto html = render::upstream_page_html(page, {});
    CHECK_THAT(html, Catch::Contains("<meta name=\"pypi:repository-version\" content=\"1.3\">"));
    CHECK_THAT(html, Catch::Contains("href=\"/files/" + std::string(64, 'a') +
                                     "/torch-2.8.0%2Bcu128-cp312-cp312-manylinux_2_28_x86_64.whl#sha256=" +
                                     std::string(64, 'a') + "\""));
    CHECK_THAT(html, Catch::Contains("data-requires-python=\"&gt;=3.9.0\""));
    CHECK_THAT(html, Catch::Contains("data-core-metadata=\"sha256=" + std::string(64, 'b') + "\""));
    CHECK_THAT(html, Catch::Contains("data-yanked=\"&lt;script&gt;alert(1)&lt;/script&gt;\""));
    CHECK_THAT(html, !Catch::Contains("files.example"));

    const auto linked = render::upstream_page_html(page, {.files_base = "/files/", .link_upstream = true});
    CHECK_THAT(linked, Catch::Contains("href=\"https://files.example/packages/torch-2.8.0+cu128-cp312-cp312-"
                                       "manylinux_2_28_x86_64.whl#sha256="));
}

TEST_CASE("upstream pages: read back as pip reads them, HTML and JSON give the files they were made from",
          "[render][upstream]") {
    const auto page = torch_page();
    const auto html = parse_project_page(render::upstream_page_html(page, {}), source_of(page_format::html));
    if (!html) FAIL(html.error().message);
    same_files(*html, page, false);
    CHECK(html->api_version == "1.3");

    const auto json = parse_project_page(render::upstream_page_json(page, {}), source_of(page_format::json));
    if (!json) FAIL(json.error().message);
    same_files(*json, page, true);
    CHECK(json->api_version == "1.3");
    CHECK(json->versions == page.versions);
}

TEST_CASE("upstream pages: JSON declares 1.0 where the upstream's data lacks what 1.1 requires", "[render][upstream]") {
    auto page = torch_page();
    CHECK(render::json_api_version(page) == "1.3");
    page.files[1].size.reset();  // an HTML upstream gives no sizes
    CHECK(render::json_api_version(page) == "1.0");
    const auto document = boost::json::parse(render::upstream_page_json(page, {})).as_object();
    CHECK(document.at("meta").at("api-version") == "1.0");
    CHECK_FALSE(document.contains("versions"));
    CHECK_FALSE(document.at("files").as_array()[1].as_object().contains("size"));
    CHECK(document.at("files").as_array()[0].at("size") == 900'000'000);
    page = torch_page();
    page.versions_listed = false;
    CHECK(render::json_api_version(page) == "1.0");
}

TEST_CASE("upstream pages: PEP 792 status passes through, a quarantined project lists no files", "[render][upstream]") {
    auto page = torch_page();
    page.status = "quarantined";
    page.status_reason = "malware";
    const auto html = render::upstream_page_html(page, {});
    CHECK_THAT(html, Catch::Contains("<meta name=\"pypi:project-status\" content=\"quarantined\">"));
    CHECK_THAT(html, Catch::Contains("<meta name=\"pypi:project-status-reason\" content=\"malware\">"));
    CHECK_THAT(html, !Catch::Contains("<a href"));
    const auto json = boost::json::parse(render::upstream_page_json(page, {})).as_object();
    CHECK(json.at("project-status").at("status") == "quarantined");
    CHECK(json.at("files").as_array().empty());
}
