// What reading a file row costs a project page (catalog::read_snapshot → files_of_project), by
// its column list (catalog/row_columns.hpp), beside the reference: the positional reader the
// list replaced, over the same statement and rows, and SQLite stepping the rows unread.

#include <benchmark/benchmark.h>

#include <filesystem>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "wheelhouse/catalog/catalog.hpp"
#include "wheelhouse/catalog/row_columns.hpp"
#include "wheelhouse/crypto/hasher.hpp"

namespace {

using namespace wheelhouse;
using catalog::file_record;

constexpr int row_count = 2000;

// A catalog of one project with row_count variant wheels, made once, removed at exit.
class bench_catalog {
public:
    bench_catalog() {
        path_ = std::filesystem::temp_directory_path() / ("wheelhouse-bench-" + std::to_string(std::random_device{}()));
        std::filesystem::create_directories(path_);
        auto opened = catalog::catalog::open(path_ / "catalog.db");
        if (!opened) throw std::runtime_error(opened.error().message);
        db_ = std::move(*opened);
        std::vector<catalog::batched_write> writes;
        for (int i = 0; i < row_count; ++i) writes.push_back({[i](sqlite::connection& db) -> result<std::string> {
            auto added = catalog::add_file_in_transaction(db, wheel(i));
            if (!added) return added.error();
            return std::string();
        }});
        for (auto& outcome : db_->write_batch(writes)) {
            if (!outcome) throw std::runtime_error(outcome.error().message);
        }
    }
    ~bench_catalog() {
        db_.reset();
        std::error_code ignored;
        std::filesystem::remove_all(path_, ignored);
    }
    const catalog::catalog& db() const { return *db_; }

private:
    static catalog::new_file wheel(int i) {
        catalog::new_file file;
        auto& row = file.file;
        row.project = "flash-attn";
        row.version = "2.8." + std::to_string(i) + "+cu128torch2.8cxx11abiFALSE";
        row.normalized_version = row.version;
        row.local_label = "cu128torch2.8cxx11abifalse";
        row.filename = "flash_attn-" + row.version + "-cp312-cp312-linux_x86_64.whl";
        row.python_tag = row.abi_tag = "cp312";
        row.platform_tag = "linux_x86_64";
        row.variant.cuda = "12.8";
        row.variant.torch = "2.8";
        row.variant.cxx11abi = false;
        row.sha256 = crypto::sha256_hex(row.filename);
        row.size = 250'000'000;
        row.requires_python = ">=3.9";
        row.summary = "Flash Attention: Fast and Memory-Efficient Exact Attention";
        row.metadata_sha256 = crypto::sha256_hex("metadata of " + row.filename);
        row.metadata_size = 4096;
        row.uploaded_by = "ci";
        return file;
    }

    std::filesystem::path path_;
    std::unique_ptr<catalog::catalog> db_;
};

const bench_catalog& shared_catalog() {
    static const bench_catalog made;
    return made;
}

// The reference: the reader the column list replaced, column by column, in the list's order.
file_record read_positionally(const sqlite::statement& row) {
    file_record file;
    file.id = row.column_int64(0);
    file.project = row.column_text(1);
    file.filename = row.column_text(2);
    file.version = row.column_text(3);
    file.normalized_version = row.column_text(4);
    file.local_label = row.column_text(5);
    file.python_tag = row.column_text(6);
    file.abi_tag = row.column_text(7);
    file.platform_tag = row.column_text(8);
    file.build_tag = row.column_optional_text(9);
    file.variant.cuda = row.column_optional_text(10);
    file.variant.sm = row.column_optional_text(11);
    file.variant.torch = row.column_optional_text(12);
    file.variant.torch_and_higher = row.column_bool(13);
    if (!row.column_is_null(14)) file.variant.cxx11abi = row.column_bool(14);
    file.variant.rocm = row.column_optional_text(15);
    file.variant.cpu = row.column_bool(16);
    file.variant.xpu = row.column_bool(17);
    file.variant.git_hash = row.column_optional_text(18);
    file.variant.build_date = row.column_optional_text(19);
    catalog::read_unparsed(row, 20, file);
    file.sha256 = row.column_text(21);
    file.size = static_cast<std::uint64_t>(row.column_int64(22));
    file.requires_python = row.column_optional_text(23);
    file.summary = row.column_optional_text(24);
    file.upload_time_ms = row.column_int64(25);
    file.yanked_reason = row.column_optional_text(26);
    file.mode = catalog::parse_download_mode(row.column_text(27)).value_or(catalog::download_mode::local);
    file.remote_url = row.column_optional_text(28);
    file.metadata_sha256 = row.column_text(29);
    file.metadata_size = static_cast<std::uint64_t>(row.column_int64(30));
    file.uploaded_by = row.column_optional_text(31);
    file.fetch_url = row.column_optional_text(32);
    file.variant_label = row.column_optional_text(33);
    file.variant_namespaces = row.column_text(34);
    file.type = catalog::parse_package_type(row.column_text(35)).value_or(catalog::package_type::wheel);
    return file;
}

// Steps every row of the project in one snapshot, handing each to `read`.
template <class Read>
void read_rows(benchmark::State& state, Read&& read) {
    static const std::string query =
        "SELECT " + catalog::file_row_columns() + " FROM files f JOIN projects p ON p.id = f.project_id ORDER BY f.filename";
    const auto& made = shared_catalog();
    for (auto _ : state) {
        auto done = made.db().read_snapshot([&](sqlite::connection& db) -> result<void> {
            auto rows = db.cached(query);
            if (!rows) return rows.error();
            for (;;) {
                auto row = (*rows)->step();
                if (!row) return row.error();
                if (!*row) return {};
                read(**rows);
            }
        });
        if (!done) state.SkipWithError(done.error().message.c_str());
    }
    state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()) * row_count);
}

void file_rows_by_column_list(benchmark::State& state) {
    read_rows(state, [](const sqlite::statement& row) { benchmark::DoNotOptimize(catalog::read_file_row(row)); });
}
BENCHMARK(file_rows_by_column_list);

void file_rows_by_position_reference(benchmark::State& state) {
    read_rows(state, [](const sqlite::statement& row) { benchmark::DoNotOptimize(read_positionally(row)); });
}
BENCHMARK(file_rows_by_position_reference);

void file_rows_stepped_unread(benchmark::State& state) {
    read_rows(state, [](const sqlite::statement& row) { benchmark::DoNotOptimize(&row); });
}
BENCHMARK(file_rows_stepped_unread);

}  // namespace
