// How fast the standards run on the index's hot paths: wheel filenames parsed (every upload and
// every listing), versions parsed, and versions compared while sorting a project's releases.
// Inputs are the real names of tests/data/, so the mix of local labels and tags is realistic.

#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdint>
#include <fstream>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "wheelhouse/pep427/wheel_filename.hpp"
#include "wheelhouse/pep440/version.hpp"
#include "wheelhouse/variants/build_variant.hpp"

namespace {

// One column of a tests/data table; the benchmark inputs have no escapes to undo.
std::vector<std::string> read_column(const std::string& file_name, std::size_t column) {
    const std::string path = std::string(WHEELHOUSE_TEST_DATA_DIR) + "/" + file_name;
    std::ifstream in(path);
    if (!in) throw std::runtime_error("cannot open " + path);
    std::vector<std::string> values;
    std::string line;
    bool header = true;
    while (std::getline(in, line)) {
        if (line.empty() || line.front() == '#') continue;
        if (header) {
            header = false;
            continue;
        }
        std::size_t start = 0;
        for (std::size_t i = 0; i < column; ++i) start = line.find('\t', start) + 1;
        values.push_back(line.substr(start, line.find('\t', start) - start));
    }
    return values;
}

const std::vector<std::string>& filenames() {
    static const std::vector<std::string> names = read_column("wheel_filenames.tsv", 0);
    return names;
}

// The versions as written in the real filenames, then the ranked list of odd spellings.
const std::vector<std::string>& version_texts() {
    static const std::vector<std::string> texts = [] {
        std::vector<std::string> out;
        for (const auto& name : filenames()) {
            const auto first = name.find('-') + 1;
            out.push_back(name.substr(first, name.find('-', first) - first));
        }
        for (auto& text : read_column("version_order.tsv", 1)) out.push_back(std::move(text));
        return out;
    }();
    return texts;
}

const std::vector<wheelhouse::pep440::version>& versions() {
    static const std::vector<wheelhouse::pep440::version> parsed = [] {
        std::vector<wheelhouse::pep440::version> out;
        for (const auto& text : version_texts()) out.push_back(wheelhouse::pep440::parse(text).value());
        return out;
    }();
    return parsed;
}

void parse_wheel_filenames(benchmark::State& state) {
    const auto& names = filenames();
    std::size_t next = 0;
    for (auto _ : state) {
        auto parsed = wheelhouse::pep427::parse_wheel_filename(names[next]);
        benchmark::DoNotOptimize(parsed);
        if (++next == names.size()) next = 0;
    }
    state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()));
}
BENCHMARK(parse_wheel_filenames);

void parse_versions(benchmark::State& state) {
    const auto& texts = version_texts();
    std::size_t next = 0;
    for (auto _ : state) {
        auto parsed = wheelhouse::pep440::parse(texts[next]);
        benchmark::DoNotOptimize(parsed);
        if (++next == texts.size()) next = 0;
    }
    state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()));
}
BENCHMARK(parse_versions);

void compare_versions(benchmark::State& state) {
    const auto& all = versions();
    std::size_t next = 0;
    for (auto _ : state) {
        const std::size_t other = next + 1 == all.size() ? 0 : next + 1;
        benchmark::DoNotOptimize(wheelhouse::pep440::compare(all[next], all[other]));
        next = other;
    }
    state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()));
}
BENCHMARK(compare_versions);

// Sorts pointers to the parsed versions from a fixed shuffle, as a listing sorts a project's
// releases; items are the comparisons made.
void sort_versions(benchmark::State& state) {
    std::vector<const wheelhouse::pep440::version*> shuffled;
    for (const auto& v : versions()) shuffled.push_back(&v);
    std::shuffle(shuffled.begin(), shuffled.end(), std::mt19937(440));
    std::int64_t comparisons = 0;
    std::vector<const wheelhouse::pep440::version*> work;
    for (auto _ : state) {
        work = shuffled;
        std::sort(work.begin(), work.end(), [&](const auto* a, const auto* b) {
            ++comparisons;
            return wheelhouse::pep440::compare(*a, *b) < 0;
        });
        benchmark::DoNotOptimize(work.data());
    }
    state.SetItemsProcessed(comparisons);
    state.counters["versions"] = static_cast<double>(shuffled.size());
}
BENCHMARK(sort_versions);

// Local labels of n repeated arch tokens with the arch-specific suffix ("sm90asm90a..."), each of
// which looks past its end: the cost per byte must stay flat as n doubles (BigO shows it).
void decode_repeated_suffixes(benchmark::State& state) {
    std::string label;
    for (std::int64_t i = 0; i < state.range(0); ++i) label += "sm90a";
    for (auto _ : state) benchmark::DoNotOptimize(wheelhouse::variants::decode_local_label(label));
    state.SetBytesProcessed(state.iterations() * static_cast<std::int64_t>(label.size()));
    state.SetComplexityN(state.range(0));
}
BENCHMARK(decode_repeated_suffixes)->RangeMultiplier(2)->Range(50, 3200)->Complexity();

}  // namespace
