#include <catch2/catch.hpp>

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include "data_folder.hpp"
#include "wheelhouse/render/simple_index.hpp"
#include "wheelhouse/render/simple_pages.hpp"
#include "wheelhouse/static_export/static_site.hpp"

using namespace wheelhouse;
using namespace wheelhouse::testing;

namespace {

variants::selector selector_of(std::string_view text) {
    auto parsed = variants::parse_selector(text);
    REQUIRE(parsed);
    return std::move(parsed).value();
}

static_export::export_options base(std::string url, std::vector<variants::selector> selectors = {}) {
    static_export::export_options options;
    options.base_url = std::move(url);
    options.variants = std::move(selectors);
    return options;
}

// The page the server renders for `project` in the index of `selector`, with its links.
std::string server_page(data_folder& data, const std::string& project, const std::optional<variants::selector>& selector,
                        bool json) {
    auto found = data.db->files_of_project(project);
    REQUIRE(found);
    REQUIRE(found->has_value());
    auto files = render::index_files((*found)->files, selector);
    render::link_options links;
    return json ? render::project_page_json((*found)->project, files, links)
                : render::project_page_html((*found)->project, files, links);
}

}  // namespace

TEST_CASE("static export: base URLs and the file links they give", "[static_export]") {
    struct row {
        std::string base_url;
        std::string files_base;  // empty: refused
        std::string message;
    };
    const std::vector<row> table = {
        {"/", "/files/", ""},
        {"/wheels", "/wheels/files/", ""},
        {"/wheels/", "/wheels/files/", ""},
        {"https://org.github.io/wheels", "https://org.github.io/wheels/files/", ""},
        {"https://org.github.io/wheels//", "https://org.github.io/wheels/files/", ""},
        {"http://127.0.0.1:8081", "http://127.0.0.1:8081/files/", ""},
        {"", "", "is empty"},
        {"wheels/", "", "must start with http://, https:// or /"},
        {"//cdn.example.org/x", "", "must start with"},
        {"ftp://example.org/", "", "must start with"},
        {"https://", "", "has no host"},
        {"https://user:secret@example.org/", "", "holds credentials"},
        {"https://example.org/?v=1", "", "query or fragment"},
        {"https://example.org/a b", "", "space, quote or control"},
        {"https://example.org/\"x", "", "space, quote or control"},
    };
    for (const auto& entry : table) {
        CAPTURE(entry.base_url);
        auto files_base = static_export::files_base_for(entry.base_url);
        if (entry.files_base.empty()) {
            REQUIRE_FALSE(files_base);
            CHECK(files_base.error().kind == error_kind::invalid);
            CHECK_THAT(files_base.error().message, Catch::Contains(entry.message));
        } else {
            REQUIRE(files_base);
            CHECK(*files_base == entry.files_base);
        }
    }
}

TEST_CASE("static export: the server's pages, byte for byte, with the wheels and METADATA beside them",
          "[static_export]") {
    data_folder data;
    const auto cu128 = data.add("flash-attn", "2.8.3+cu128torch2.8", "cp312-cp312-linux_x86_64");
    const auto cu130 = data.add("flash-attn", "2.8.3+cu130torch2.10", "cp312-cp312-linux_x86_64");
    const auto pure = data.add("Demo.Package", "1.0");
    temp_dir place;
    const auto out = place / "site";
    auto exported = static_export::export_site(*data.db, *data.store, out, base("/", {selector_of("torch2.10-cu130")}));
    REQUIRE(exported);
    CHECK(exported->projects == 2);
    CHECK(exported->wheels == 3);
    CHECK(exported->metadata_files == 3);
    CHECK(exported->remote_links == 0);
    CHECK(exported->pages == 2 * (2 + 2 * 2));  // two trees: a list and two projects, HTML and JSON each

    auto projects = data.db->list_projects();
    REQUIRE(projects);
    const auto listing = render::project_listings(*projects);
    CHECK(read_file(out / "simple" / "index.html") == render::project_list_html(listing));
    CHECK(read_file(out / "simple" / "index.json") == render::project_list_json(listing));
    CHECK(read_file(out / "variants" / "cu130-torch2.10" / "simple" / "index.html") == render::project_list_html(listing));

    const auto variant = selector_of("cu130-torch2.10");
    for (const std::string project : {"flash-attn", "demo-package"}) {
        CAPTURE(project);
        CHECK(read_file(out / "simple" / project / "index.html") == server_page(data, project, std::nullopt, false));
        CHECK(read_file(out / "simple" / project / "index.json") == server_page(data, project, std::nullopt, true));
        const auto variant_folder = out / "variants" / "cu130-torch2.10" / "simple" / project;
        CHECK(read_file(variant_folder / "index.html") == server_page(data, project, variant, false));
        CHECK(read_file(variant_folder / "index.json") == server_page(data, project, variant, true));
    }
    // The variant page holds the cu130 build only.
    const auto variant_page = read_file(out / "variants" / "cu130-torch2.10" / "simple" / "flash-attn" / "index.html");
    CHECK_THAT(variant_page, Catch::Contains(cu130.sha256) && !Catch::Contains(cu128.sha256));

    for (const auto* file : {&cu128, &cu130, &pure}) {
        CHECK(read_file(out / "files" / file->sha256 / file->filename) == read_file(data.store->blob_path(file->sha256)));
        CHECK(read_file(out / "files" / file->sha256 / (file->filename + ".metadata")) ==
              read_file(data.store->metadata_path(file->sha256)));
    }
}

TEST_CASE("static export: links start with the base URL, remote files link to their URL without metadata",
          "[static_export]") {
    data_folder data;
    const auto local = data.add("demo", "1.0");
    const auto remote = data.add("demo", "1.1");
    const auto cached = data.add("demo", "1.2");
    const std::string remote_url = "https://github.com/org/demo/releases/download/v1.1/" + remote.filename;
    data.execute("UPDATE files SET download_mode = 'redirect', remote_url = '" + remote_url + "' WHERE filename = '" +
                 remote.filename + "'");
    data.execute("UPDATE files SET download_mode = 'cache', remote_url = 'https://example.org/c.whl' WHERE filename = '" +
                 cached.filename + "'");
    std::filesystem::remove(data.store->blob_path(remote.sha256));
    temp_dir place;
    auto exported = static_export::export_site(*data.db, *data.store, place / "site", base("https://org.github.io/w/"));
    REQUIRE(exported);
    CHECK(exported->wheels == 2);
    CHECK(exported->remote_links == 1);
    const auto page = read_file(place / "site" / "simple" / "demo" / "index.html");
    CHECK_THAT(page, Catch::Contains("href=\"https://org.github.io/w/files/" + local.sha256 + "/" + local.filename +
                                     "#sha256=" + local.sha256 + "\""));
    // A cached blob is held locally, so it is exported like a local one.
    CHECK_THAT(page, Catch::Contains("https://org.github.io/w/files/" + cached.sha256 + "/"));
    CHECK_THAT(page, Catch::Contains("href=\"" + remote_url + "#sha256=" + remote.sha256 + "\" data-requires-python=\"&gt;=3.8\">"));
    CHECK_FALSE(std::filesystem::exists(place / "site" / "files" / remote.sha256));
    const auto json = read_file(place / "site" / "simple" / "demo" / "index.json");
    CHECK_THAT(json, Catch::Contains("\"url\":\"" + remote_url + "\""));
}

TEST_CASE("static export: a quarantined project's files are neither listed nor copied", "[static_export]") {
    data_folder data;
    const auto file = data.add("demo", "1.0");
    data.execute("UPDATE projects SET status = 'quarantined' WHERE name = 'demo'");
    temp_dir place;
    auto exported = static_export::export_site(*data.db, *data.store, place / "site", base("/"));
    REQUIRE(exported);
    CHECK(exported->wheels == 0);
    CHECK_FALSE(std::filesystem::exists(place / "site" / "files"));
    CHECK_THAT(read_file(place / "site" / "simple" / "demo" / "index.html"), !Catch::Contains(file.filename));
}

TEST_CASE("static export: one snapshot, so a project deleted meanwhile leaves no dangling link", "[static_export]") {
    data_folder data;
    const auto alpha = data.add("alpha", "1.0");
    const auto beta = data.add("beta", "1.0");
    // Holds the export inside the copy of alpha's wheel, after it has read the project list:
    // the blob becomes a FIFO that is filled only once beta is gone from the catalog.
    const auto blob = data.store->blob_path(alpha.sha256);
    const auto bytes = read_file(blob);
    std::filesystem::remove(blob);
    REQUIRE(::mkfifo(blob.c_str(), 0600) == 0);

    std::string feeder_failure;  // Catch assertions belong to the main thread
    std::thread feeder([&] {
        // A write to a pipe the export gave up on must fail here, not kill the tests with SIGPIPE.
        sigset_t pipe_signal;
        sigemptyset(&pipe_signal);
        sigaddset(&pipe_signal, SIGPIPE);
        pthread_sigmask(SIG_BLOCK, &pipe_signal, nullptr);
        // Opening for writing succeeds once a reader has the FIFO open: wait for the export.
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
        int fifo = -1;
        while ((fifo = ::open(blob.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC)) < 0) {
            if (errno != ENXIO || std::chrono::steady_clock::now() > deadline) {
                feeder_failure = "the export never opened alpha's blob";
                return;
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(5));
        }
        auto deleted = data.db->write_transaction([](sqlite::connection& db) -> result<void> {
            auto files = db.execute("DELETE FROM files WHERE project_id = (SELECT id FROM projects WHERE name = 'beta')");
            if (!files) return files;
            return db.execute("DELETE FROM projects WHERE name = 'beta'");
        });
        if (!deleted) feeder_failure = deleted.error().message;
        ::fcntl(fifo, F_SETFL, 0);  // blocking writes from here
        for (std::size_t done = 0; done < bytes.size();) {
            const auto written = ::write(fifo, bytes.data() + done, bytes.size() - done);
            if (written <= 0) {
                feeder_failure = "the export stopped reading alpha's blob";
                break;
            }
            done += static_cast<std::size_t>(written);
        }
        ::close(fifo);
    });
    temp_dir place;
    auto exported = static_export::export_site(*data.db, *data.store, place / "site", base("/"));
    feeder.join();
    INFO(feeder_failure);
    REQUIRE(feeder_failure.empty());
    const auto beta_now = data.db->files_of_project("beta");
    REQUIRE(beta_now);
    REQUIRE_FALSE(beta_now->has_value());  // beta really went meanwhile
    INFO((exported ? std::string() : exported.error().message));
    REQUIRE(exported);

    // The export is the catalog as it was when the export began: beta listed, with its page.
    CHECK(exported->projects == 2);
    CHECK_THAT(read_file(place / "site" / "simple" / "index.html"), Catch::Contains("href=\"beta/\""));
    CHECK_THAT(read_file(place / "site" / "simple" / "beta" / "index.html"), Catch::Contains(beta.filename));
    CHECK(read_file(place / "site" / "files" / alpha.sha256 / alpha.filename) == bytes);
}

TEST_CASE("static export: refusals leave nothing at the target", "[static_export]") {
    data_folder data;
    const auto file = data.add("demo", "1.0");
    temp_dir place;
    SECTION("a folder that is not empty") {
        write_file(place / "site" / "CNAME", "wheels.example.org");
        auto exported = static_export::export_site(*data.db, *data.store, place / "site", base("/"));
        REQUIRE_FALSE(exported);
        CHECK(exported.error().kind == error_kind::invalid);
        CHECK_THAT(exported.error().message, Catch::Contains("is not empty"));
        CHECK(count_files(place / "site") == 1);
    }
    SECTION("a bad base URL") {
        auto exported = static_export::export_site(*data.db, *data.store, place / "site", base("site/"));
        REQUIRE_FALSE(exported);
        CHECK_FALSE(std::filesystem::exists(place / "site"));
    }
    SECTION("a corrupt blob: corrupt bytes are never published") {
        std::filesystem::remove(data.store->blob_path(file.sha256));
        write_file(data.store->blob_path(file.sha256), "not the wheel");
        auto exported = static_export::export_site(*data.db, *data.store, place / "site", base("/"));
        REQUIRE_FALSE(exported);
        CHECK_THAT(exported.error().message, Catch::Contains(file.filename) && Catch::Contains("wheelhouse fsck"));
        CHECK_FALSE(std::filesystem::exists(place / "site"));
        CHECK(count_files(place.path()) == 0);
    }
    SECTION("a missing blob") {
        std::filesystem::remove(data.store->blob_path(file.sha256));
        auto exported = static_export::export_site(*data.db, *data.store, place / "site", base("/"));
        REQUIRE_FALSE(exported);
        CHECK_THAT(exported.error().message, Catch::Contains("No such file"));
        CHECK(count_files(place.path()) == 0);
    }
}
