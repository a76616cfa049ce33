#include "wheelhouse/cli/ingest_command.hpp"

#include <sys/ioctl.h>
#include <unistd.h>

#include <CLI/Option.hpp>
#include <CLI/Validators.hpp>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>

#include "wheelhouse/catalog/catalog.hpp"
#include "wheelhouse/cli/commands.hpp"
#include "wheelhouse/cli/data_option.hpp"
#include "wheelhouse/cli/s3_options.hpp"
#include "wheelhouse/error_text.hpp"
#include "wheelhouse/ingest/ingester.hpp"
#include "wheelhouse/storage/blob_store.hpp"

namespace wheelhouse::cli {
namespace {

enum class file_outcome { added, identical, rejected };

struct work_item {
    std::filesystem::path path;
    std::optional<std::string> problem;  // known before ingesting: the path does not exist
};

struct file_report {
    file_outcome outcome = file_outcome::rejected;
    std::string reason;
};

// Every *.whl and *.tar.gz under directories (sorted, so runs are repeatable); files named on the command
// line are taken whatever their name, and the filename check says what is wrong with them.
std::pair<std::vector<work_item>, std::size_t> collect(const std::vector<std::string>& paths) {
    std::vector<work_item> items;
    std::size_t ignored = 0;
    for (const auto& given : paths) {
        const std::filesystem::path path(given);
        std::error_code failure;
        const auto status = std::filesystem::status(path, failure);
        if (std::filesystem::is_directory(status)) {
            std::vector<std::filesystem::path> found;
            // Symbolic links to directories are not followed: they make cycles and duplicates.
            std::filesystem::recursive_directory_iterator walk(path, failure);
            for (; !failure && walk != std::filesystem::recursive_directory_iterator(); walk.increment(failure)) {
                if (!walk->is_regular_file()) continue;
                const auto name = walk->path().filename().string();
                if (name.ends_with(".whl") || name.ends_with(".tar.gz")) found.push_back(walk->path());
                else ++ignored;
            }
            if (failure) items.push_back({path, "cannot read the directory: " + failure.message()});
            std::sort(found.begin(), found.end());
            for (auto& file : found) items.push_back({std::move(file), std::nullopt});
        } else if (std::filesystem::exists(status)) {
            items.push_back({path, std::nullopt});
        } else {
            items.push_back({path, "no such file or directory"});
        }
    }
    return {std::move(items), ignored};
}

// A one-line progress bar on stderr, redrawn in place; only on a terminal.
class progress_bar {
public:
    progress_bar(std::size_t total, bool enabled) : total_(total), enabled_(enabled) {}

    void update(std::size_t added, std::size_t identical, std::size_t rejected, const std::string& current) {
        if (!enabled_) return;
        std::lock_guard lock(mutex_);
        const std::size_t done = added + identical + rejected;
        constexpr std::size_t bar_width = 24;
        const std::size_t filled = total_ == 0 ? bar_width : done * bar_width / total_;
        std::string line = "\r[" + std::string(filled, '#') + std::string(bar_width - filled, '.') + "] " +
                           std::to_string(done) + "/" + std::to_string(total_) + "  added " + std::to_string(added) +
                           ", identical " + std::to_string(identical) + ", rejected " + std::to_string(rejected) + "  " +
                           current;
        const std::size_t width = terminal_width();
        if (line.size() > width) line.resize(width);
        std::fprintf(stderr, "%s\033[K", line.c_str());
        std::fflush(stderr);
    }

    void finish() {
        if (!enabled_) return;
        std::fprintf(stderr, "\r\033[K");
        std::fflush(stderr);
    }

private:
    static std::size_t terminal_width() {
        winsize size{};
        if (::ioctl(STDERR_FILENO, TIOCGWINSZ, &size) == 0 && size.ws_col > 20) return size.ws_col;
        return 80;
    }

    std::size_t total_;
    bool enabled_;
    std::mutex mutex_;
};

file_report ingest_one(ingest::ingester& ingester, const work_item& item) {
    if (item.problem) return {file_outcome::rejected, *item.problem};
    ingest::ingest_options ingest_options;
    ingest_options.uploaded_by = "cli";
    auto ingested = ingester.ingest_file(item.path, ingest_options);
    if (!ingested) return {file_outcome::rejected, describe(ingested.error())};
    return {ingested->outcome == ingest::ingest_outcome::created ? file_outcome::added : file_outcome::identical, {}};
}

// How many files ended each way, counted by the workers as they go.
struct tally {
    std::atomic<std::size_t> added{0}, identical{0}, rejected{0};

    void count(file_outcome outcome) {
        (outcome == file_outcome::added ? added : outcome == file_outcome::identical ? identical : rejected)++;
    }
};

void print_outcome(const work_item& item, const file_report& report) {
    const char* word = report.outcome == file_outcome::added       ? "added    "
                       : report.outcome == file_outcome::identical ? "identical"
                                                                   : "rejected ";
    std::fprintf(stdout, "%s %s%s%s\n", word, item.path.c_str(), report.reason.empty() ? "" : ": ", report.reason.c_str());
    std::fflush(stdout);
}

void print_summary(const std::filesystem::path& data_dir, const std::vector<work_item>& items,
                   const std::vector<file_report>& reports, std::size_t ignored, const tally& counts) {
    std::printf("wheelhouse ingest: %zu file%s into %s\n", items.size(), items.size() == 1 ? "" : "s",
                data_dir.c_str());
    std::printf("  added      %zu\n", counts.added.load());
    std::printf("  identical  %zu (already present, byte for byte)\n", counts.identical.load());
    std::printf("  rejected   %zu\n", counts.rejected.load());
    if (ignored > 0) {
        std::printf("  (%zu file%s without the .whl or .tar.gz extension ignored)\n", ignored, ignored == 1 ? "" : "s");
    }
    if (counts.rejected > 0) {
        std::printf("rejected:\n");
        for (std::size_t i = 0; i < items.size(); ++i) {
            if (reports[i].outcome != file_outcome::rejected) continue;
            std::printf("  %s: %s\n", items[i].path.c_str(), reports[i].reason.c_str());
        }
    }
    std::fflush(stdout);
}

// `work` on `jobs` threads, this one among them, until each returns.
void run_on_threads(std::size_t jobs, const std::function<void()>& work) {
    std::vector<std::thread> workers;
    for (std::size_t i = 1; i < jobs; ++i) workers.emplace_back(work);
    work();
    for (auto& worker : workers) worker.join();
}

}  // namespace

int run_ingest(const ingest_command_options& options) {
    const std::filesystem::path data_dir(options.data_dir);
    auto bucket = bucket_of(options.settings);
    if (!bucket) {
        std::fprintf(stderr, "wheelhouse ingest: cannot use the bucket: %s\n", bucket.error().message.c_str());
        return 2;
    }
    auto store = storage::blob_store::open(data_dir, *bucket);
    if (!store) {
        std::fprintf(stderr, "wheelhouse ingest: %s\n", store.error().message.c_str());
        return 2;
    }
    auto catalog = catalog::catalog::open(data_dir / "catalog.db");
    if (!catalog) {
        std::fprintf(stderr, "wheelhouse ingest: %s\n", catalog.error().message.c_str());
        return 2;
    }
    ingest::ingester ingester(**catalog, *store);
    (void)ingester.recover();  // leftovers of crashed runs; a failure here blocks nothing

    auto [items, ignored] = collect(options.paths);
    std::vector<file_report> reports(items.size());
    std::atomic<std::size_t> next{0};
    tally counts;
    progress_bar progress(items.size(), ::isatty(STDERR_FILENO) == 1);
    std::mutex output;

    // `files` names the binding: clang 14 cannot capture a structured binding.
    const auto work = [&, &files = items] {
        for (std::size_t index = next++; index < files.size(); index = next++) {
            const auto& item = files[index];
            reports[index] = ingest_one(ingester, item);
            counts.count(reports[index].outcome);
            if (options.verbose) {
                std::lock_guard lock(output);
                print_outcome(item, reports[index]);
            }
            progress.update(counts.added, counts.identical, counts.rejected, item.path.filename().string());
        }
    };
    const std::size_t cores = std::max<std::size_t>(1, std::thread::hardware_concurrency());
    run_on_threads(std::min(options.jobs == 0 ? cores : options.jobs, std::max<std::size_t>(1, items.size())), work);
    progress.finish();

    print_summary(data_dir, items, reports, ignored, counts);
    return counts.rejected > 0 ? 1 : 0;
}

void add_ingest_command(CLI::App& app) {
    auto options = std::make_shared<ingest_command_options>();
    CLI::App* command = app.add_subcommand(
        "ingest", "Add wheels and sdists, or every *.whl and *.tar.gz under directories, to the index");
    add_settings_options(*command, config::option_set::bucket, [options](config::settings resolved) {
        options->data_dir = resolved.data.string();
        options->settings = std::move(resolved);
    });
    command->add_option("-j,--jobs", options->jobs, "worker threads (default: one per core)")
        ->check(CLI::NonNegativeNumber);
    command->add_flag("-v,--verbose", options->verbose, "print every file with its outcome");
    command->add_option("paths", options->paths, "wheel or sdist files, or directories to search for *.whl and *.tar.gz")->required();
    command->footer("Exit status: 0 when every file was added or already present, 1 when any was rejected, "
                    "2 when the data directory cannot be opened.");
    command->callback([options] { set_exit_status(run_ingest(*options)); });
}

}  // namespace wheelhouse::cli
