#pragma once
// A data folder with real ingested wheels, for the tests of what reads a whole one: backup,
// restore, fsck, export.

#include <memory>
#include <string>

#include <catch2/catch.hpp>

#include "test_support.hpp"
#include "wheelhouse/catalog/catalog.hpp"
#include "wheelhouse/ingest/ingester.hpp"
#include "wheelhouse/sqlite/connection.hpp"
#include "wheelhouse/storage/blob_store.hpp"
#include "zip_builder.hpp"

namespace wheelhouse::testing {

struct data_folder {
    temp_dir dir;
    std::unique_ptr<catalog::catalog> db;
    std::unique_ptr<storage::blob_store> store;

    data_folder() { open(); }

    void open() {
        auto opened = catalog::catalog::open(dir / "catalog.db");
        REQUIRE(opened);
        db = std::move(opened).value();
        auto made = storage::blob_store::open(dir.path());
        REQUIRE(made);
        store = std::make_unique<storage::blob_store>(std::move(made).value());
    }

    // Ingests a wheel of `name` (as METADATA spells it) at `version`, whose bytes differ by
    // `payload`. No Catch assertion inside: safe to call from a second thread.
    result<ingest::ingest_result> try_add(const std::string& name, const std::string& version,
                                          const std::string& tags = "py3-none-any", const std::string& payload = "") {
        wheel_spec spec;
        std::string dist = name;
        for (auto& c : dist) if (c == '-' || c == '.') c = '_';
        spec.dist_info = dist + "-" + version + ".dist-info";
        spec.metadata = "Metadata-Version: 2.1\nName: " + name + "\nVersion: " + version +
                        "\nRequires-Python: >=3.8\nSummary: " + name + " for tests\n\n" + payload + "\n";
        spec.files = {{dist + "/__init__.py", "VALUE = '" + version + payload + "'\n"}};
        const auto filename = dist + "-" + version + "-" + tags + ".whl";
        auto spool = store->create_spool();
        if (!spool) return spool.error();
        write_file(spool->path(), build_wheel(spec));
        ingest::ingester ingester(*db, *store);
        ingest::ingest_options options;
        options.uploaded_by = "tests";
        return ingester.ingest_spool(std::move(spool).value(), filename, options);
    }

    catalog::file_record add(const std::string& name, const std::string& version,
                             const std::string& tags = "py3-none-any", const std::string& payload = "") {
        auto ingested = try_add(name, version, tags, payload);
        if (!ingested) FAIL(ingested.error().message);
        return ingested->file;
    }

    std::int64_t rows() const {
        auto reader = sqlite::connection::open(dir / "catalog.db", {.read_only = true});
        REQUIRE(reader);
        return *reader->query_int64("SELECT count(*) FROM files");
    }

    // Sets a row's columns by SQL, for states ingest never makes (remote rows, damaged rows).
    void execute(const std::string& sql) {
        auto result = db->write_transaction([&](sqlite::connection& connection) { return connection.execute(sql); });
        REQUIRE(result);
    }
};

}  // namespace wheelhouse::testing
