// Upstream project pages (upstream/project_page), PEP 691 JSON when the input's first byte is
// even, PEP 503 HTML when odd; the rest is the page of the project "demo". Beside memory safety:
// - every file kept is a wheel or sdist of "demo" by the name pip reads, with a lower-case
//   sha256, an absolute http(s) URL, no filename twice; the api-version is 1.0 to 1.4;
// - a refusal's message is printable, one reason and its detail;
// - the page this index serves from what it kept (render/upstream_pages), read back by the same
//   reader, lists the same files with the same hashes, requires-python, yanks and core-metadata
//   hashes, in HTML and in JSON (where sizes and upload times come back too); none for a
//   quarantined project.

#include <algorithm>
#include <string>

#include "fuzz_support.hpp"
#include "wheelhouse/crypto/hasher.hpp"
#include "wheelhouse/render/upstream_pages.hpp"
#include "wheelhouse/upstream/project_page.hpp"

namespace {

namespace upstream = wheelhouse::upstream;

void check_same_files(const upstream::project_page& read, const upstream::project_page& written, bool json,
                      const std::string& page) {
    if (written.status == "quarantined") {  // PEP 792: its files are not offered
        WHEELHOUSE_FUZZ_CHECK(read.files.empty(), page);
        return;
    }
    WHEELHOUSE_FUZZ_CHECK(read.files.size() == written.files.size(), page);
    for (std::size_t i = 0; i < read.files.size(); ++i) {
        const auto& a = read.files[i];
        const auto& b = written.files[i];
        WHEELHOUSE_FUZZ_CHECK(a.filename == b.filename && a.sha256 == b.sha256, page);
        WHEELHOUSE_FUZZ_CHECK(a.requires_python == b.requires_python && a.yanked_reason == b.yanked_reason, page);
        WHEELHOUSE_FUZZ_CHECK(a.metadata_sha256 == b.metadata_sha256, page);
        if (json) WHEELHOUSE_FUZZ_CHECK(a.size == b.size && a.upload_time == b.upload_time, page);
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size == 0) return 0;
    const auto format = data[0] % 2 == 0 ? upstream::page_format::json : upstream::page_format::html;
    const auto body = wheelhouse::fuzz::as_text(data + 1, size - 1);
    const upstream::page_source source{"demo", "https://upstream.example/simple/demo/", format};
    auto parsed = upstream::parse_project_page(body, source);
    if (!parsed) {
        const auto& message = parsed.error().message;
        const bool printable = std::all_of(message.begin(), message.end(), [](char c) {
            return c == '\n' || (c >= 0x20 && c < 0x7F);
        });
        WHEELHOUSE_FUZZ_CHECK(!message.empty() && printable, message);
        return 0;
    }
    const auto& page = *parsed;
    WHEELHOUSE_FUZZ_CHECK(page.api_version >= "1.0" && page.api_version <= "1.4" && page.api_version.size() == 3,
                          page.api_version);
    for (std::size_t i = 0; i < page.files.size(); ++i) {
        const auto& file = page.files[i];
        WHEELHOUSE_FUZZ_CHECK(upstream::names_file_of(file.filename, "demo"), file.filename);
        WHEELHOUSE_FUZZ_CHECK(wheelhouse::crypto::is_sha256_hex(file.sha256), file.sha256);
        WHEELHOUSE_FUZZ_CHECK(file.url.starts_with("https://") || file.url.starts_with("http://"), file.url);
        for (std::size_t j = 0; j < i; ++j) WHEELHOUSE_FUZZ_CHECK(page.files[j].filename != file.filename, file.filename);
    }
    for (const auto& links : {wheelhouse::render::upstream_links{}, wheelhouse::render::upstream_links{"/files/", true}}) {
        const auto html = wheelhouse::render::upstream_page_html(page, links);
        auto html_back = upstream::parse_project_page(html, {"demo", source.url, upstream::page_format::html});
        WHEELHOUSE_FUZZ_CHECK(html_back.has_value(), html + (html_back ? "" : html_back.error().message));
        check_same_files(*html_back, page, false, html);
        const auto json = wheelhouse::render::upstream_page_json(page, links);
        auto json_back = upstream::parse_project_page(json, {"demo", source.url, upstream::page_format::json});
        WHEELHOUSE_FUZZ_CHECK(json_back.has_value(), json + (json_back ? "" : json_back.error().message));
        check_same_files(*json_back, page, true, json);
    }
    return 0;
}
