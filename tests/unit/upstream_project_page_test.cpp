// Upstream project pages as PyPI (PEP 691 JSON) and PyTorch's indexes (PEP 503 HTML) write them,
// and as a lying upstream might: what is kept, what is left out, what refuses the page.

#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "wheelhouse/upstream/project_page.hpp"

using namespace wheelhouse;
using namespace wheelhouse::upstream;

namespace {

const std::string sha_a(64, 'a');
const std::string sha_b(64, 'b');
const std::string sha_c(64, 'c');

// PyPI's page of six, trimmed to two files, as https://pypi.org/simple/six/ answers JSON.
const std::string pypi_six = R"({"meta":{"_last-serial":26154374,"api-version":"1.3"},"name":"six",
"project-status":{"status":"active"},"versions":["1.16.0","1.17.0"],"files":[
{"core-metadata":{"sha256":")" + sha_b + R"("},"data-dist-info-metadata":{"sha256":")" + sha_b + R"("},
 "filename":"six-1.17.0-py2.py3-none-any.whl","hashes":{"sha256":")" + sha_a + R"("},"provenance":null,
 "requires-python":"!=3.0.*,!=3.1.*,!=3.2.*,>=2.7","size":11050,"upload-time":"2024-12-04T17:35:26.475048Z",
 "url":"https://files.pythonhosted.org/packages/b7/ce/six-1.17.0-py2.py3-none-any.whl","yanked":false},
{"core-metadata":false,"data-dist-info-metadata":false,"filename":"six-1.16.0.tar.gz",
 "hashes":{"sha256":")" + sha_c + R"(","md5":"a7c927740e4964dd29b72cebfc1429bb"},"requires-python":">=2.7",
 "size":34041,"upload-time":"2021-05-05T14:18:18.379496Z",
 "url":"https://files.pythonhosted.org/packages/71/39/six-1.16.0.tar.gz","yanked":"broken on 3.12"}]})";

// PyTorch's cu128 page of torch, as https://download.pytorch.org/whl/cu128/torch/ answers it.
const std::string pytorch_torch = R"(<!DOCTYPE html>
<html>
  <body>
    <h1>Links for torch</h1>
    <a href="/whl/cu128/torch-2.8.0%2Bcu128-cp312-cp312-manylinux_2_28_x86_64.whl#sha256=)" + sha_a +
                                  R"(" data-requires-python="&gt;=3.9.0" data-dist-info-metadata="sha256=)" + sha_b +
                                  R"(" data-core-metadata="sha256=)" + sha_b +
                                  R"(">torch-2.8.0+cu128-cp312-cp312-manylinux_2_28_x86_64.whl</a><br/>
    <a href="/whl/cu128/torch-2.7.1%2Bcu128-cp312-cp312-win_amd64.whl#sha256=)" + sha_c +
                                  R"(" data-yanked="">torch-2.7.1+cu128-cp312-cp312-win_amd64.whl</a><br/>
  </body>
</html>
<!--TIMESTAMP 1754000000-->
)";

page_source json_source(std::string project = "six") {
    return {std::move(project), "https://pypi.org/simple/six/", page_format::json};
}
page_source html_source(std::string project = "torch") {
    return {std::move(project), "https://download.pytorch.org/whl/cu128/torch/", page_format::html};
}

project_page parsed(std::string_view body, const page_source& source) {
    auto page = parse_project_page(body, source);
    if (!page) FAIL(page.error().message);
    return std::move(page).value();
}

std::string refusal(std::string_view body, const page_source& source) {
    auto page = parse_project_page(body, source);
    REQUIRE_FALSE(page.has_value());
    CHECK(page.error().kind == error_kind::invalid);
    return page.error().message;
}

// An HTML page of `project` holding `links` as written.
std::string html_page(std::string_view links) {
    return "<!DOCTYPE html>\n<html><body><h1>Links</h1>\n" + std::string(links) + "\n</body></html>\n";
}

std::string anchor(std::string_view href, std::string_view text, std::string_view attributes = "") {
    return "<a href=\"" + std::string(href) + "\"" + std::string(attributes) + ">" + std::string(text) + "</a><br>\n";
}

}  // namespace

TEST_CASE("upstream page: PyPI's JSON keeps every field pip reads", "[upstream]") {
    const auto page = parsed(pypi_six, json_source());
    CHECK(page.project == "six");
    CHECK(page.api_version == "1.3");
    CHECK_FALSE(page.status);  // "active" is no status to pass on
    CHECK(page.versions == std::vector<std::string>{"1.16.0", "1.17.0"});
    CHECK(page.versions_listed);
    REQUIRE(page.files.size() == 2);
    const auto& wheel = page.files[0];
    CHECK(wheel.filename == "six-1.17.0-py2.py3-none-any.whl");
    CHECK(wheel.url == "https://files.pythonhosted.org/packages/b7/ce/six-1.17.0-py2.py3-none-any.whl");
    CHECK(wheel.sha256 == sha_a);
    CHECK(wheel.metadata_sha256 == sha_b);
    CHECK(wheel.requires_python == "!=3.0.*,!=3.1.*,!=3.2.*,>=2.7");
    CHECK(wheel.size == 11050u);
    CHECK(wheel.upload_time == "2024-12-04T17:35:26.475048Z");
    CHECK_FALSE(wheel.yanked_reason);
    const auto& sdist = page.files[1];
    CHECK(sdist.filename == "six-1.16.0.tar.gz");
    CHECK_FALSE(sdist.metadata_sha256);
    CHECK(sdist.yanked_reason == "broken on 3.12");
    CHECK(page.left_out == 0);
}

TEST_CASE("upstream page: PyTorch's HTML, links resolved against the page and names decoded", "[upstream]") {
    const auto page = parsed(pytorch_torch, html_source());
    CHECK(page.api_version == "1.0");  // no repository-version meta
    REQUIRE(page.files.size() == 2);
    const auto& linux = page.files[0];
    CHECK(linux.filename == "torch-2.8.0+cu128-cp312-cp312-manylinux_2_28_x86_64.whl");
    CHECK(linux.url == "https://download.pytorch.org/whl/cu128/torch-2.8.0%2Bcu128-cp312-cp312-manylinux_2_28_x86_64.whl");
    CHECK(linux.sha256 == sha_a);
    CHECK(linux.requires_python == ">=3.9.0");
    CHECK(linux.metadata_sha256 == sha_b);
    CHECK_FALSE(linux.size);
    CHECK(page.files[1].yanked_reason == "");
    CHECK(page.left_out == 0);
}

TEST_CASE("upstream page: HTML metas, <base>, and the tags a page of links may hold", "[upstream]") {
    const auto body = "<!DOCTYPE html><html><head>\n"
                      "<meta name=\"pypi:repository-version\" content=\"1.4\">\n"
                      "<meta name=\"pypi:project-status\" content=\"archived\">\n"
                      "<meta name=\"pypi:project-status-reason\" content=\"moved to &quot;torch2&quot;\">\n"
                      "<title>Links for <torch></title><script>if (a < b) document.write('<a href=x>')</script>\n"
                      "<base href=\"HTTPS://mirror.example/packages/\"></head><body>\n"
                      "<!-- <a href=\"commented-out\"> -->" +
                      anchor("torch-2.8.0-cp312-none-any.whl#sha256=" + sha_a, "torch-2.8.0-cp312-none-any.whl") +
                      "<a HREF='torch-2.7.0.tar.gz#SHA256=" + std::string(64, 'C') +
                      "' DATA-YANKED=reason>\n  torch-2.7.0.tar.gz\n</a></body></html>";
    const auto page = parsed(body, html_source());
    CHECK(page.api_version == "1.4");
    CHECK(page.status == "archived");
    CHECK(page.status_reason == "moved to \"torch2\"");
    INFO(page.first_left_out);
    REQUIRE(page.files.size() == 2);
    CHECK(page.files[0].url == "https://mirror.example/packages/torch-2.8.0-cp312-none-any.whl");
    CHECK(page.files[1].url == "https://mirror.example/packages/torch-2.7.0.tar.gz");
    CHECK(page.files[1].sha256 == sha_c);  // case folded
    CHECK(page.files[1].yanked_reason == "reason");
}

TEST_CASE("upstream page: api-versions newer than this index's are read as its own, another major is refused",
          "[upstream]") {
    CHECK(supported_api_version("1.0").value() == "1.0");
    CHECK(supported_api_version("1.4").value() == "1.4");
    CHECK(supported_api_version("1.17").value() == "1.4");
    CHECK_FALSE(supported_api_version("2.0"));
    CHECK_FALSE(supported_api_version("1"));
    CHECK_FALSE(supported_api_version("1.x"));
    CHECK_FALSE(supported_api_version(""));
    CHECK_THAT(refusal(R"({"meta":{"api-version":"2.0"},"name":"six","files":[]})", json_source()),
               Catch::Contains("this index reads version 1 (PEP 629)"));
    CHECK_THAT(refusal(html_page("<meta name=\"pypi:repository-version\" content=\"2.1\">"), html_source()),
               Catch::Contains("api-version is '2.1'"));
}

TEST_CASE("upstream page: whole pages refused, each with its reason", "[upstream][hostile]") {
    struct refused_case {
        std::string body;
        page_format format;
        std::string reason;
    };
    const std::string file = R"({"filename":"six-1.0.tar.gz","url":"six-1.0.tar.gz","hashes":{"sha256":")" + sha_a + "\"}}";
    const std::vector<refused_case> cases = {
        {R"({"meta":{"api-version":"1.0"},"name":"six","name":"numpy","files":[]})", page_format::json,
         "key 'name' appears twice in one object"},
        {R"({"meta":{"api-version":"1.0"},"name":"six","files":[{"filename":"a","filename":"b"}]})", page_format::json,
         "key 'filename' appears twice"},
        {R"({"meta":{"api-version":"1.0"},"name":"six","files":[],"x":)" + std::string(100, '[') +
             std::string(100, ']') + "}",
         page_format::json, "nested deeper than 8 levels"},
        {R"({"meta":{"api-version":"1.0"},"name":"six","files":[]} {})", page_format::json, "not valid JSON"},
        {"{\"meta\":{\"api-version\":\"1.0\"},\"name\":\"six\xff\",\"files\":[]}", page_format::json,
         "not valid JSON"},
        {R"({"meta":{"api-version":"1.0"},"name":"numpy","files":[]})", page_format::json,
         "it names the project 'numpy', not six"},
        {R"({"meta":{"api-version":"1.0"},"name":"Six","files":{}})", page_format::json, "it has no array files"},
        {R"({"meta":{},"name":"six","files":[]})", page_format::json, "its meta has no api-version"},
        {R"({"meta":{"api-version":"1.0"},"name":"six","files":[)" + file + "," +
             R"({"filename":"six-1.0.tar.gz","url":"six-1.0.tar.gz","hashes":{"sha256":")" + sha_b + "\"}}]}",
         page_format::json, "it lists six-1.0.tar.gz twice, with sha256 " + sha_a + " and " + sha_b},
        {R"({"meta":{"api-version":"1.1"},"name":"six","files":[{"filename":"six-1.0.tar.gz","url":"x","hashes":{},"size":-1}]})",
         page_format::json, "a file's size is not a non-negative integer"},
        {R"({"meta":{"api-version":"1.0"},"name":"six","files":[{"filename":"six-1.0.tar.gz","url":"x","hashes":{},"yanked":1}]})",
         page_format::json, "a file's yanked is neither a boolean nor a reason"},
        {html_page("\xc3(") , page_format::html, "it is not UTF-8"},
        {html_page("<a href=\"a\"><a href=\"b\">b</a></a>"), page_format::html, "a tag 'a' is inside a link (<a>)"},
        {html_page("<a href=\"a\"><b>six-1.0.tar.gz</b></a>"), page_format::html, "a tag 'b' is inside a link"},
        {"<html><a href=\"six-1.0.tar.gz\">six-1.0.tar.gz", page_format::html, "a link (<a>) is left open"},
        {"<html><a href=\"six-1.0.tar.gz", page_format::html, "quoted value is left open"},
        {"<html><!-- <a href=x>", page_format::html, "a comment is left open"},
        {html_page("<a href=\"a\" HREF=\"b\">b</a>"), page_format::html, "a tag has the attribute 'href' twice"},
        {html_page("<meta name=\"pypi:repository-version\" content=\"1.0\"><meta name=\"pypi:repository-version\" "
                   "content=\"1.1\">"),
         page_format::html, "twice, differently"},
        {html_page("<script>"), page_format::html, "a <script> is left open"},
    };
    for (const auto& each : cases) {
        INFO(each.body.substr(0, 200));
        const auto source = each.format == page_format::json ? json_source() : html_source("six");
        CHECK_THAT(refusal(each.body, source), Catch::Contains(each.reason));
    }
}

TEST_CASE("upstream page: files left out, each with its reason, the rest kept", "[upstream][hostile]") {
    struct left_case {
        std::string link;
        std::string reason;
    };
    const std::string fragment = "#sha256=" + sha_a;
    const std::vector<left_case> cases = {
        {anchor("flash_attn-9.9.9-py3-none-any.whl" + fragment, "flash_attn-9.9.9-py3-none-any.whl"),
         "is no wheel or sdist of six"},
        {anchor("sixer-1.0.tar.gz" + fragment, "sixer-1.0.tar.gz"), "is no wheel or sdist of six"},
        {anchor("six-foo-1.0.tar.gz" + fragment, "six-foo-1.0.tar.gz"), "is no wheel or sdist of six"},
        {anchor("six-1.0.exe" + fragment, "six-1.0.exe"), "is no wheel or sdist of six"},
        {anchor("six-1.0.tar.gz", "six-1.0.tar.gz"), "has no sha256"},
        {anchor("six-1.0.tar.gz#sha512=" + std::string(128, 'a'), "six-1.0.tar.gz"), "has no sha256"},
        {anchor("six-1.0.tar.gz#sha256=" + std::string(63, 'a'), "six-1.0.tar.gz"), "has no sha256"},
        {anchor("six-1.0.tar.gz" + fragment, "six-2.0.tar.gz"), "the page names 'six-2.0.tar.gz' a file whose URL names"},
        {anchor("ftp://host/six-1.0.tar.gz" + fragment, "six-1.0.tar.gz"), "is no http(s) URL"},
        {anchor("javascript:alert(1)//six-1.0.tar.gz" + fragment, "six-1.0.tar.gz"), "is no http(s) URL"},
        {anchor("six-1.0.tar.gz" + fragment, "six-1.0.tar.gz&copy;"), "character reference this index does not decode"},
        {anchor("six-1.0.tar.gz" + fragment, "six-1.0.tar.gz", " data-yanked=\"&#0;\""),
         "character reference this index does not decode"},
        {anchor("six/" + fragment, ""), "is no wheel or sdist of six"},
        {anchor("six-1.0.tar.gz" + fragment, "six-1.0.tar.gz",
              " data-requires-python=\"" + std::string(max_text_length + 1, '>') + "\""),
         "past 4096 bytes"},
        {anchor("x" + std::string(max_url_length, 'x') + fragment, "six-1.0.tar.gz"), "a URL of"},
    };
    const auto kept = anchor("https://files.example/six-1.0-py3-none-any.whl" + fragment, "six-1.0-py3-none-any.whl");
    for (const auto& each : cases) {
        INFO(each.link.substr(0, 200));
        const auto page = parsed(html_page(each.link + kept), html_source("six"));
        CHECK(page.left_out == 1);
        CHECK_THAT(page.first_left_out, Catch::Contains(each.reason));
        REQUIRE(page.files.size() == 1);
        CHECK(page.files[0].filename == "six-1.0-py3-none-any.whl");
    }
}

TEST_CASE("upstream page: names that normalise alike are one project, a file twice with one hash is listed once",
          "[upstream]") {
    const std::string fragment = "#sha256=" + sha_a;
    const auto page = parsed(html_page(anchor("Flash_Attn-2.8.3.tar.gz" + fragment, "Flash_Attn-2.8.3.tar.gz") +
                                       anchor("flash.attn-2.8.2.zip" + fragment, "flash.attn-2.8.2.zip") +
                                       anchor("flash_attn-2.8.3-py3-none-any.whl" + fragment,
                                            "flash_attn-2.8.3-py3-none-any.whl") +
                                       anchor("flash_attn-2.8.3-py3-none-any.whl" + fragment,
                                            "flash_attn-2.8.3-py3-none-any.whl")),
                             html_source("flash-attn"));
    CHECK(page.files.size() == 3);
    CHECK(page.left_out == 0);
    CHECK(names_file_of("FLASH-attn-1.0.tar.bz2", "flash-attn"));
    CHECK_FALSE(names_file_of("flash-attn-notaversion.tar.gz", "flash-attn"));
    CHECK_FALSE(names_file_of("flash-attn-1.0.tar.gz", "flash"));
    CHECK_FALSE(names_file_of("../flash_attn-1.0.tar.gz", "flash-attn"));
}

TEST_CASE("upstream page: Content-Type decides the reader", "[upstream]") {
    CHECK(format_of_content_type("application/vnd.pypi.simple.v1+json") == page_format::json);
    CHECK(format_of_content_type("Application/Vnd.PyPI.Simple.v1+JSON; charset=utf-8") == page_format::json);
    CHECK(format_of_content_type("application/vnd.pypi.simple.v1+html") == page_format::html);
    CHECK(format_of_content_type("text/html; charset=utf-8") == page_format::html);
    CHECK_FALSE(format_of_content_type("application/json"));
    CHECK_FALSE(format_of_content_type("application/vnd.pypi.simple.latest+json"));
    CHECK_FALSE(format_of_content_type(""));
}

TEST_CASE("upstream page: PEP 740 provenance URLs pass through, resolved, and what is no http(s) URL is dropped",
          "[upstream][hostile]") {
    // A file of six with `provenance` as the JSON value given.
    const auto entry = [](std::string_view version, std::string_view provenance) {
        const auto name = "six-" + std::string(version) + "-py3-none-any.whl";
        return R"({"filename":")" + name + R"(","url":"https://files.example/)" + name + R"(","hashes":{"sha256":")" +
               sha_a + R"("},"provenance":)" + std::string(provenance) + "}";
    };
    const auto page_of = [](const std::vector<std::string>& files) {
        std::string listed;
        for (const auto& each : files) listed += (listed.empty() ? "" : ",") + each;
        return R"({"meta":{"api-version":"1.3"},"name":"six","files":[)" + listed + "]}";
    };
    const auto page = parsed(page_of({entry("1.0", R"("https://pypi.org/integrity/six/1.0/p")"), entry("1.1", "null"),
                                      entry("1.2", R"x("javascript:alert(1)")x"), entry("1.3", R"("../integrity/six/1.3/p")"),
                                      entry("1.4", "\"https://h/" + std::string(max_url_length, 'x') + "\""),
                                      entry("1.5", R"("")")}),
                             json_source());
    REQUIRE(page.files.size() == 6);  // a provenance the index cannot pass on never costs the file
    CHECK(page.files[0].provenance == "https://pypi.org/integrity/six/1.0/p");
    CHECK_FALSE(page.files[1].provenance);
    CHECK_FALSE(page.files[2].provenance);
    CHECK(page.files[3].provenance == "https://pypi.org/simple/integrity/six/1.3/p");
    CHECK_FALSE(page.files[4].provenance);
    CHECK_FALSE(page.files[5].provenance);
    CHECK_THAT(refusal(page_of({entry("1.0", "true")}), json_source()),
               Catch::Contains("provenance is neither a URL nor null"));

    const auto wheel = [](std::string_view version) { return "torch-" + std::string(version) + "-cp312-none-any.whl"; };
    const auto links = anchor(wheel("2.8.0") + "#sha256=" + sha_a, wheel("2.8.0"),
                              " data-provenance=\"/integrity/torch/2.8.0/p?a=1&amp;b=2\"") +
                       anchor(wheel("2.7.0") + "#sha256=" + sha_b, wheel("2.7.0"), " data-provenance=\"file:///etc/passwd\"");
    const auto html = parsed(html_page(links), html_source());
    REQUIRE(html.files.size() == 2);
    CHECK(html.files[0].provenance == "https://download.pytorch.org/integrity/torch/2.8.0/p?a=1&b=2");
    CHECK_FALSE(html.files[1].provenance);
}

TEST_CASE("upstream page: what links resolve to stays linear in the page, whatever its <base href>",
          "[upstream][hostile]") {
    const auto based = [](std::size_t base_bytes, int links) {
        std::string body = "<base href=\"https://h.example/" + std::string(base_bytes, 'b') + "/\">";
        for (int i = 0; i < links; ++i) {
            const auto name = "torch-2." + std::to_string(i) + "-cp312-none-any.whl";
            body += anchor(name + "#sha256=" + sha_a, name, " data-provenance=\"p\"");
        }
        return html_page(body);
    };
    CHECK_THAT(refusal(based(max_url_length, 1), html_source()), Catch::Contains("<base href> is"));
    // Each link adds ~90 bytes to the page and two URLs of ~8 KiB to what it resolves to.
    const auto multiplied = based(8000, 100);
    CHECK_THAT(refusal(multiplied, html_source()), Catch::Contains("resolve to more than twice its size"));
    const auto page = parsed(based(200, 100), html_source());
    REQUIRE(page.files.size() == 100);
    CHECK(page.files[0].provenance == "https://h.example/" + std::string(200, 'b') + "/p");
    // A file URL past the bound once resolved is left out, as one past it as written.
    const auto long_file = parsed(html_page("<base href=\"https://h.example/" + std::string(8100, 'b') + "/\">" +
                                            anchor("torch-2.0-cp312-none-any.whl#sha256=" + sha_a,
                                                   "torch-2.0-cp312-none-any.whl")),
                                  html_source());
    CHECK(long_file.files.empty());
    CHECK_THAT(long_file.first_left_out, Catch::Contains("past 8192 bytes once resolved"));
}
