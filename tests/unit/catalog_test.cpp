#include <catch2/catch.hpp>

#include <atomic>
#include <optional>
#include <thread>
#include <vector>

#include "test_support.hpp"
#include "wheelhouse/catalog/catalog.hpp"
#include "wheelhouse/crypto/hasher.hpp"
#include "wheelhouse/sqlite/connection.hpp"

using namespace wheelhouse;
using namespace wheelhouse::catalog;
using wheelhouse::testing::temp_dir;

namespace {

std::unique_ptr<catalog::catalog> open_catalog(const temp_dir& dir) {
    auto opened = catalog::catalog::open(dir / "catalog.db");
    REQUIRE(opened);
    return std::move(opened).value();
}

new_file make_file(std::string filename, std::string bytes_label = "bytes", std::string project = "flash-attn") {
    new_file file;
    file.project_display_name = "flash_attn";
    file.file.project = std::move(project);
    file.file.filename = std::move(filename);
    file.file.version = "2.8.3+cu128torch2.8";
    file.file.normalized_version = "2.8.3+cu128torch2.8";
    file.file.local_label = "cu128torch2.8";
    file.file.python_tag = "cp312";
    file.file.abi_tag = "cp312";
    file.file.platform_tag = "linux_x86_64";
    file.file.sha256 = crypto::sha256_hex(bytes_label);
    file.file.size = 1234;
    file.file.metadata_sha256 = crypto::sha256_hex("metadata of " + bytes_label);
    file.file.metadata_size = 99;
    file.file.uploaded_by = "ci";
    return file;
}

std::int64_t count(const temp_dir& dir, std::string_view sql) {
    auto db = sqlite::connection::open(dir / "catalog.db", {.read_only = true});
    REQUIRE(db);
    auto value = db->query_int64(sql);
    REQUIRE(value);
    return *value;
}

}  // namespace

TEST_CASE("catalog: a file round-trips with every field", "[catalog]") {
    temp_dir dir;
    auto db = open_catalog(dir);
    auto file = make_file("flash_attn-2.8.3+cu128torch2.8-1cuda-cp312-cp312-linux_x86_64.whl");
    file.file.build_tag = "1cuda";
    file.file.variant = {.cuda = "12.8", .sm = "8.9", .torch = "2.8", .torch_and_higher = true, .cxx11abi = false,
                         .rocm = std::nullopt, .cpu = false, .xpu = true, .git_hash = "1a2b3c4", .build_date = "20250101",
                         .unparsed = {"weird", "piece,with\"quote"}};
    file.file.requires_python = ">=3.9";
    file.file.summary = "Flash Attention: Fast and Memory-Efficient Exact Attention";
    file.file.upload_time_ms = 1'700'000'000'123;
    file.file.yanked_reason = "";
    file.file.mode = download_mode::redirect;
    file.file.remote_url = "https://github.com/Dao-AILab/flash-attention/releases/download/v2.8.3/x.whl";
    file.file.fetch_url = "https://api.github.com/repos/Dao-AILab/flash-attention/releases/assets/42";

    auto added = db->add_file(file);
    REQUIRE(added);
    CHECK(added->outcome == add_outcome::created);
    CHECK(added->file.id > 0);

    auto found = db->find_file(file.file.filename);
    REQUIRE(found);
    REQUIRE(found->has_value());
    const file_record& row = **found;
    file_record expected = file.file;
    expected.id = added->file.id;
    CHECK(row.id == expected.id);
    CHECK(row.project == expected.project);
    CHECK(row.filename == expected.filename);
    CHECK(row.version == expected.version);
    CHECK(row.normalized_version == expected.normalized_version);
    CHECK(row.local_label == expected.local_label);
    CHECK(row.python_tag == expected.python_tag);
    CHECK(row.abi_tag == expected.abi_tag);
    CHECK(row.platform_tag == expected.platform_tag);
    CHECK(row.build_tag == expected.build_tag);
    CHECK(row.variant == expected.variant);
    CHECK(row.sha256 == expected.sha256);
    CHECK(row.size == expected.size);
    CHECK(row.requires_python == expected.requires_python);
    CHECK(row.summary == expected.summary);
    CHECK(row.upload_time_ms == expected.upload_time_ms);
    CHECK(row.yanked_reason == std::optional<std::string>(""));
    CHECK(row.yanked());
    CHECK(row.mode == download_mode::redirect);
    CHECK(row.remote_url == expected.remote_url);
    CHECK(row.fetch_url == expected.fetch_url);
    CHECK(row.metadata_sha256 == expected.metadata_sha256);
    CHECK(row.metadata_size == 99);
    CHECK(row.uploaded_by == std::optional<std::string>("ci"));
}

TEST_CASE("catalog: optional fields stay absent, and cxx11abi keeps false apart from unknown", "[catalog]") {
    temp_dir dir;
    auto db = open_catalog(dir);
    auto plain = make_file("demo-1.0-py3-none-any.whl");
    plain.file.uploaded_by.reset();
    REQUIRE(db->add_file(plain));
    auto abi_false = make_file("demo-1.1-py3-none-any.whl", "other");
    abi_false.file.variant.cxx11abi = false;
    REQUIRE(db->add_file(abi_false));

    auto row = **db->find_file("demo-1.0-py3-none-any.whl");
    CHECK_FALSE(row.build_tag.has_value());
    CHECK(row.variant == variants::build_variant{});
    CHECK_FALSE(row.yanked());
    CHECK_FALSE(row.requires_python.has_value());
    CHECK_FALSE(row.uploaded_by.has_value());
    CHECK(row.upload_time_ms > 1'600'000'000'000);  // 0 means "now"
    CHECK((**db->find_file("demo-1.1-py3-none-any.whl")).variant.cxx11abi == std::optional<bool>(false));
}

TEST_CASE("catalog: adding a taken filename is identical for the same bytes and a conflict for others", "[catalog]") {
    temp_dir dir;
    auto db = open_catalog(dir);
    const auto name = "flash_attn-2.8.3-cp312-cp312-linux_x86_64.whl";
    auto first = db->add_file(make_file(name, "one"));
    REQUIRE(first);
    REQUIRE(first->outcome == add_outcome::created);

    auto again = db->add_file(make_file(name, "one"));
    REQUIRE(again);
    CHECK(again->outcome == add_outcome::identical);
    CHECK(again->file.id == first->file.id);

    auto other = db->add_file(make_file(name, "two"));
    REQUIRE(other);
    CHECK(other->outcome == add_outcome::conflict);
    CHECK(other->file.sha256 == crypto::sha256_hex("one"));  // the row that holds the name
    CHECK(count(dir, "SELECT count(*) FROM files") == 1);
    CHECK(count(dir, "SELECT count(*) FROM audit_log WHERE action = 'add_file'") == 1);
}

TEST_CASE("catalog: a batch commits once, each write keeps its own outcome, duplicates included", "[catalog]") {
    temp_dir dir;
    auto db = open_catalog(dir);
    std::vector<std::string> heard;
    db->subscribe([&](std::string_view project) { heard.emplace_back(project); });
    const auto name = "demo-1.0-py3-none-any.whl";
    std::vector<std::optional<add_result>> added(5);
    auto adding = [&](std::size_t slot, new_file file) {
        return batched_write{[&, slot, file = std::move(file)](sqlite::connection& writer) -> result<std::string> {
            auto done = add_file_in_transaction(writer, file);
            if (!done) return done.error();
            added[slot] = *done;
            return done->outcome == add_outcome::created ? file.file.project : std::string();
        }};
    };
    const std::vector<batched_write> batch{
        adding(0, make_file(name, "one", "demo")),
        adding(1, make_file(name, "one", "demo")),  // the same bytes again, in the same batch: identical
        adding(2, make_file(name, "two", "demo")),  // other bytes under the name: conflict
        {[](sqlite::connection& writer) -> result<std::string> {
            // Writes, then fails: its own changes go, the batch's stay.
            if (auto done = add_file_in_transaction(writer, make_file("demo-9.0-py3-none-any.whl", "nine", "demo"));
                !done) {
                return done.error();
            }
            return make_error(error_kind::invalid, "refused after writing");
        }},
        adding(4, make_file("other-1.0-py3-none-any.whl", "three", "other")),
    };
    auto outcomes = db->write_batch(batch);
    REQUIRE(outcomes.size() == 5);
    CHECK(outcomes[0]);
    CHECK(outcomes[1]);
    CHECK(outcomes[2]);
    REQUIRE_FALSE(outcomes[3]);
    CHECK(outcomes[3].error().message == "refused after writing");
    CHECK(outcomes[4]);
    CHECK(added[0]->outcome == add_outcome::created);
    CHECK(added[1]->outcome == add_outcome::identical);
    CHECK(added[1]->file.id == added[0]->file.id);
    CHECK(added[2]->outcome == add_outcome::conflict);
    CHECK(added[4]->outcome == add_outcome::created);
    CHECK(count(dir, "SELECT count(*) FROM files") == 2);
    CHECK(count(dir, "SELECT count(*) FROM files WHERE filename = 'demo-9.0-py3-none-any.whl'") == 0);
    CHECK(count(dir, "SELECT count(*) FROM audit_log WHERE action = 'add_file'") == 2);
    CHECK(heard == std::vector<std::string>{"demo", "other"});  // once each, after the one commit
}

TEST_CASE("catalog: a full disk fails the write that met it, and exactly what reports success is kept", "[catalog]") {
    temp_dir dir;
    auto db = open_catalog(dir);
    REQUIRE(db->add_file(make_file("demo-0.9-py3-none-any.whl", "zero", "demo")));
    const batched_write small{[](sqlite::connection& writer) -> result<std::string> {
        auto done = add_file_in_transaction(writer, make_file("demo-1.0-py3-none-any.whl", "one", "demo"));
        if (!done) return done.error();
        return std::string("demo");
    }};
    const batched_write too_big{[](sqlite::connection& writer) -> result<std::string> {
        // The database may not grow: SQLITE_FULL, as when the disk is full.
        auto pages = writer.query_int64("PRAGMA page_count");
        if (!pages) return pages.error();
        if (auto limited = writer.execute("PRAGMA max_page_count = " + std::to_string(*pages)); !limited) {
            return limited.error();
        }
        auto file = make_file("demo-2.0-py3-none-any.whl", "two", "demo");
        file.file.summary = std::string(1 << 20, 's');
        auto done = add_file_in_transaction(writer, file);
        if (!done) return done.error();
        return std::string("demo");
    }};
    const std::vector<batched_write> batch{small, too_big};
    auto outcomes = db->write_batch(batch);
    REQUIRE(outcomes.size() == 2);
    REQUIRE_FALSE(outcomes[1]);
    CHECK(outcomes[1].error().kind == error_kind::unavailable);
    CHECK_THAT(outcomes[1].error().message, Catch::Contains("disk holding the catalog is full"));
    // SQLite undoes the statement, or the whole transaction: either way the outcomes say which.
    CHECK(count(dir, "SELECT count(*) FROM files") == (outcomes[0] ? 2 : 1));
    CHECK(count(dir, "SELECT count(*) FROM files WHERE filename = 'demo-2.0-py3-none-any.whl'") == 0);
    REQUIRE(db->write_transaction(
        [](sqlite::connection& writer) { return writer.execute("PRAGMA max_page_count = 1073741823"); }));
    CHECK(db->add_file(make_file("demo-3.0-py3-none-any.whl", "three", "demo")));  // the writer goes on
}

TEST_CASE("catalog: projects are created by their first file and listed with counts", "[catalog]") {
    temp_dir dir;
    auto db = open_catalog(dir);
    REQUIRE(db->add_file(make_file("flash_attn-2.8.3-cp312-cp312-linux_x86_64.whl", "a")));
    auto second = make_file("flash_attn-2.8.2-cp312-cp312-linux_x86_64.whl", "b");
    second.project_display_name = "Flash-Attn";  // a later spelling does not rename the project
    REQUIRE(db->add_file(second));
    auto other = make_file("sageattention-2.2.0-cp312-cp312-linux_x86_64.whl", "c", "sageattention");
    other.project_display_name = "SageAttention";
    REQUIRE(db->add_file(other));

    auto projects = db->list_projects();
    REQUIRE(projects);
    REQUIRE(projects->size() == 2);
    CHECK((*projects)[0].project.name == "flash-attn");
    CHECK((*projects)[0].project.display_name == "flash_attn");
    CHECK((*projects)[0].project.status == project_status::active);
    CHECK((*projects)[0].file_count == 2);
    CHECK((*projects)[0].last_upload_ms > 0);
    CHECK((*projects)[1].project.name == "sageattention");
    CHECK((*projects)[1].project.display_name == "SageAttention");
    CHECK((*projects)[1].file_count == 1);

    auto project = db->find_project("sageattention");
    REQUIRE(project);
    REQUIRE(project->has_value());
    CHECK((*project)->display_name == "SageAttention");
    CHECK_FALSE(db->find_project("SageAttention")->has_value());  // callers normalise first
    CHECK_FALSE(db->find_project("nope")->has_value());

    auto files = db->files_of_project("flash-attn");
    REQUIRE(files);
    REQUIRE(files->has_value());
    CHECK((*files)->project.name == "flash-attn");
    REQUIRE((*files)->files.size() == 2);
    CHECK((*files)->files[0].filename == "flash_attn-2.8.2-cp312-cp312-linux_x86_64.whl");
    CHECK((*files)->files[1].filename == "flash_attn-2.8.3-cp312-cp312-linux_x86_64.whl");
    CHECK_FALSE(db->files_of_project("nope")->has_value());
}

TEST_CASE("catalog: a file is found by sha256 and filename only when both match", "[catalog]") {
    temp_dir dir;
    auto db = open_catalog(dir);
    const auto name = "demo-1.0-py3-none-any.whl";
    REQUIRE(db->add_file(make_file(name, "x")));
    CHECK(db->find_file(crypto::sha256_hex("x"), name)->has_value());
    CHECK_FALSE(db->find_file(crypto::sha256_hex("y"), name)->has_value());
    CHECK_FALSE(db->find_file(crypto::sha256_hex("x"), "demo-1.1-py3-none-any.whl")->has_value());
    CHECK(*db->references_blob(crypto::sha256_hex("x")));
    CHECK_FALSE(*db->references_blob(crypto::sha256_hex("y")));
}

TEST_CASE("catalog: an error from before_insert aborts the add, project included", "[catalog]") {
    temp_dir dir;
    auto db = open_catalog(dir);
    bool called = false;
    auto added = db->add_file(make_file("demo-1.0-py3-none-any.whl"), [&]() -> result<void> {
        called = true;
        return make_error(error_kind::internal, "the blob vanished");
    });
    CHECK(called);
    REQUIRE_FALSE(added);
    CHECK(added.error().message == "the blob vanished");
    CHECK(count(dir, "SELECT count(*) FROM files") == 0);
    CHECK(count(dir, "SELECT count(*) FROM projects") == 0);
    CHECK(count(dir, "SELECT count(*) FROM audit_log") == 0);

    // Not called when nothing is inserted.
    REQUIRE(db->add_file(make_file("demo-1.0-py3-none-any.whl")));
    called = false;
    REQUIRE(db->add_file(make_file("demo-1.0-py3-none-any.whl"), [&]() -> result<void> {
        called = true;
        return {};
    }));
    CHECK_FALSE(called);
}

TEST_CASE("catalog: yank, unyank, delete and project status, with an audit trail", "[catalog]") {
    temp_dir dir;
    auto db = open_catalog(dir);
    const auto name = "demo-1.0-py3-none-any.whl";
    REQUIRE(db->add_file(make_file(name, "x", "demo")));

    auto yanked = db->yank(name, "broken on CUDA 12.1", "admin");
    REQUIRE(yanked);
    CHECK(yanked->yanked_reason == std::optional<std::string>("broken on CUDA 12.1"));
    CHECK((**db->find_file(name)).yanked());
    auto unyanked = db->unyank(name, "admin");
    REQUIRE(unyanked);
    CHECK_FALSE(unyanked->yanked());
    CHECK_FALSE((**db->find_file(name)).yanked());

    auto status = db->set_project_status("demo", project_status::quarantined, "malware report", "admin");
    REQUIRE(status);
    CHECK(status->status == project_status::quarantined);
    CHECK((**db->find_project("demo")).status_reason == std::optional<std::string>("malware report"));

    auto removed = db->delete_file(name, "admin");
    REQUIRE(removed);
    CHECK(removed->sha256 == crypto::sha256_hex("x"));
    CHECK_FALSE(db->find_file(name)->has_value());
    CHECK((**db->files_of_project("demo")).files.empty());  // the project stays

    for (auto missing : {db->yank("nope.whl", "", "admin"), db->unyank("nope.whl", "admin"), db->delete_file("nope.whl", "admin")}) {
        REQUIRE_FALSE(missing);
        CHECK(missing.error().kind == error_kind::not_found);
    }
    CHECK(db->set_project_status("nope", project_status::archived, std::nullopt, "admin").error().kind == error_kind::not_found);
    CHECK(count(dir, "SELECT count(*) FROM audit_log WHERE actor = 'admin'") == 4);
    CHECK(count(dir, "SELECT count(*) FROM audit_log WHERE action = 'delete_file' AND target = 'demo-1.0-py3-none-any.whl'") == 1);
}

TEST_CASE("catalog: release_blob runs the removal only when no row references the bytes", "[catalog]") {
    temp_dir dir;
    auto db = open_catalog(dir);
    const auto sha256 = crypto::sha256_hex("shared");
    REQUIRE(db->add_file(make_file("demo-1.0-py3-none-any.whl", "shared")));
    REQUIRE(db->add_file(make_file("demo-1.0-py2.py3-none-any.whl", "shared")));  // same bytes, other name
    int removals = 0;
    auto remove = [&]() -> result<void> {
        ++removals;
        return {};
    };
    CHECK_FALSE(*db->release_blob(sha256, remove));
    REQUIRE(db->delete_file("demo-1.0-py3-none-any.whl", "admin"));
    CHECK_FALSE(*db->release_blob(sha256, remove));
    REQUIRE(db->delete_file("demo-1.0-py2.py3-none-any.whl", "admin"));
    CHECK(*db->release_blob(sha256, remove));
    CHECK(removals == 1);
    auto failing = db->release_blob(sha256, [] { return result<void>(make_error(error_kind::internal, "disk")); });
    REQUIRE_FALSE(failing);
    CHECK(failing.error().message == "disk");
}

TEST_CASE("catalog: listeners hear of each committed change, after the commit", "[catalog]") {
    temp_dir dir;
    auto db = open_catalog(dir);
    std::vector<std::string> heard;
    db->subscribe([&](std::string_view project) {
        // After the commit: the change is already readable from here.
        CHECK(db->find_project(project)->has_value());
        heard.emplace_back(project);
    });
    REQUIRE(db->add_file(make_file("demo-1.0-py3-none-any.whl", "x", "demo")));
    REQUIRE(db->add_file(make_file("demo-1.0-py3-none-any.whl", "x", "demo")));  // identical: no change
    REQUIRE(db->add_file(make_file("demo-1.0-py3-none-any.whl", "y", "demo")));  // conflict: no change
    REQUIRE(db->yank("demo-1.0-py3-none-any.whl", "", "admin"));
    REQUIRE_FALSE(db->yank("nope.whl", "", "admin"));
    REQUIRE(db->delete_file("demo-1.0-py3-none-any.whl", "admin"));
    CHECK(heard == std::vector<std::string>{"demo", "demo", "demo"});
}

TEST_CASE("catalog: changed_externally notices another connection's commit, not our own", "[catalog]") {
    temp_dir dir;
    auto server = open_catalog(dir);
    CHECK_FALSE(server->changed_externally());
    REQUIRE(server->add_file(make_file("demo-1.0-py3-none-any.whl", "x", "demo")));
    CHECK_FALSE(server->changed_externally());

    auto other_process = open_catalog(dir);  // as `wheelhouse ingest` would
    REQUIRE(other_process->add_file(make_file("demo-1.1-py3-none-any.whl", "y", "demo")));
    CHECK(server->changed_externally());
    CHECK_FALSE(server->changed_externally());  // once per change
    CHECK((**server->files_of_project("demo")).files.size() == 2);

    // The count the token cache asks for, shared with changed_externally(): whichever notices
    // a commit first, the other still learns of it.
    const auto seen = server->external_changes();
    REQUIRE(seen);
    REQUIRE(server->add_file(make_file("demo-1.2-py3-none-any.whl", "z", "demo")));
    CHECK(server->external_changes() == seen);
    REQUIRE(other_process->add_file(make_file("demo-1.3-py3-none-any.whl", "w", "demo")));
    CHECK(server->external_changes() == *seen + 1);
    CHECK(server->external_changes() == *seen + 1);
    CHECK(server->changed_externally());
    CHECK_FALSE(server->changed_externally());
}

TEST_CASE("catalog: concurrent adds of one filename end with exactly one row", "[catalog]") {
    temp_dir dir;
    auto shared = open_catalog(dir);
    auto second_process = open_catalog(dir);  // a second writer connection, as another process has
    constexpr int threads = 8;
    std::atomic<int> created{0};
    std::atomic<int> conflicts{0};
    std::atomic<int> failures{0};
    std::vector<std::thread> pool;
    for (int i = 0; i < threads; ++i) {
        pool.emplace_back([&, i] {
            auto& db = (i % 2 == 0) ? *shared : *second_process;
            auto added = db.add_file(make_file("demo-1.0-py3-none-any.whl", "bytes " + std::to_string(i), "demo"));
            if (!added) {
                ++failures;
            } else if (added->outcome == add_outcome::created) {
                ++created;
            } else if (added->outcome == add_outcome::conflict) {
                ++conflicts;
            }
        });
    }
    for (auto& thread : pool) thread.join();
    CHECK(failures == 0);
    CHECK(created == 1);
    CHECK(conflicts == threads - 1);
    CHECK(count(dir, "SELECT count(*) FROM files") == 1);
    CHECK(count(dir, "SELECT count(*) FROM projects") == 1);
}

TEST_CASE("catalog: readers on many threads see whole writes while a writer adds", "[catalog]") {
    temp_dir dir;
    auto db = open_catalog(dir);
    constexpr int files = 60;
    std::atomic<bool> done{false};
    std::atomic<int> read_errors{0};
    std::atomic<int> torn_reads{0};
    std::vector<std::thread> readers;
    for (int r = 0; r < 4; ++r) {
        readers.emplace_back([&] {
            while (!done) {
                auto projects = db->list_projects();
                auto page = db->files_of_project("demo");
                if (!projects || !page) {
                    ++read_errors;
                    continue;
                }
                for (const auto& listing : *projects) {
                    if (listing.file_count == 0) ++torn_reads;  // a project never exists without its first file
                }
            }
        });
    }
    for (int i = 0; i < files; ++i) {
        auto added = db->add_file(make_file("demo-1." + std::to_string(i) + "-py3-none-any.whl", std::to_string(i), "demo"));
        REQUIRE(added);
    }
    done = true;
    for (auto& reader : readers) reader.join();
    CHECK(read_errors == 0);
    CHECK(torn_reads == 0);
    CHECK((**db->files_of_project("demo")).files.size() == files);
}

TEST_CASE("catalog: a database from a newer wheelhouse is refused at open", "[catalog]") {
    temp_dir dir;
    {
        auto db = sqlite::connection::open(dir / "catalog.db", {.create = true});
        REQUIRE(db);
        REQUIRE(db->execute("PRAGMA user_version = 9999"));
    }
    auto opened = catalog::catalog::open(dir / "catalog.db");
    REQUIRE_FALSE(opened);
    CHECK_THAT(opened.error().message, Catch::Contains("schema version 9999"));
}
