// What reading an upstream's page costs as it grows: honest pages of 1,024 to 65,536 files (PyPI's
// JSON, PyTorch's HTML) and hostile shapes of the same sizes (a key repeated late, nesting as
// deep as allowed, attributes piled on one tag, character references everywhere). Each doubling of
// the input should double the time, no more: Google Benchmark's Complexity fit prints the order.

#include <benchmark/benchmark.h>

#include <string>

#include "wheelhouse/upstream/project_page.hpp"

namespace {

namespace upstream = wheelhouse::upstream;

const std::string sha(64, 'a');

std::string json_page(std::int64_t files) {
    std::string out = R"({"meta":{"api-version":"1.3"},"name":"demo","versions":[],"files":[)";
    for (std::int64_t i = 0; i < files; ++i) {
        const auto name = "demo-1." + std::to_string(i) + "-py3-none-any.whl";
        out += (i ? "," : "") + std::string(R"({"filename":")") + name + R"(","url":"https://files.example/)" + name +
               R"(","hashes":{"sha256":")" + sha + R"("},"requires-python":">=3.9","size":1000,)" +
               R"("upload-time":"2025-01-01T00:00:00.000001Z","yanked":false,"core-metadata":{"sha256":")" + sha +
               R"("}})";
    }
    return out + "]}";
}

std::string html_page(std::int64_t files) {
    std::string out = "<!DOCTYPE html><html><body><h1>Links for demo</h1>\n";
    for (std::int64_t i = 0; i < files; ++i) {
        const auto name = "demo-1." + std::to_string(i) + "+cu128-cp312-cp312-linux_x86_64.whl";
        out += "<a href=\"/whl/cu128/demo-1." + std::to_string(i) + "%2Bcu128-cp312-cp312-linux_x86_64.whl#sha256=" +
               sha + "\" data-requires-python=\"&gt;=3.9\" data-core-metadata=\"sha256=" + sha + "\">" + name +
               "</a><br/>\n";
    }
    return out + "</body></html>\n";
}

// One object with `size` keys, the last one a repeat of the first: found at the end, in linear time.
std::string repeated_key_page(std::int64_t size) {
    std::string out = R"({"meta":{"api-version":"1.0"},"name":"demo","files":[],"x":{)";
    for (std::int64_t i = 0; i < size; ++i) out += "\"k" + std::to_string(i) + "\":0,";
    return out + "\"k0\":1}}";
}

// Tags of 64 attributes each (the most one may hold), every value full of references.
std::string attribute_heavy_page(std::int64_t size) {
    std::string tag = "<p";
    for (int i = 0; i < 64; ++i) tag += " a" + std::to_string(i) + "=\"&amp;&#38;&lt;\"";
    tag += ">\n";
    std::string out;
    for (std::int64_t i = 0; i < size / 16; ++i) out += tag;
    return out;
}

void parse(benchmark::State& state, const std::string& body, upstream::page_format format) {
    const upstream::page_source source{"demo", "https://upstream.example/simple/demo/", format};
    for (auto _ : state) {
        auto page = upstream::parse_project_page(body, source);
        benchmark::DoNotOptimize(page);
    }
    state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) * static_cast<std::int64_t>(body.size()));
    state.SetComplexityN(static_cast<std::int64_t>(body.size()));
}

void upstream_json_page(benchmark::State& state) { parse(state, json_page(state.range(0)), upstream::page_format::json); }
void upstream_html_page(benchmark::State& state) { parse(state, html_page(state.range(0)), upstream::page_format::html); }
void upstream_json_repeated_key(benchmark::State& state) {
    parse(state, repeated_key_page(state.range(0)), upstream::page_format::json);
}
void upstream_html_attributes(benchmark::State& state) {
    parse(state, attribute_heavy_page(state.range(0)), upstream::page_format::html);
}

BENCHMARK(upstream_json_page)->RangeMultiplier(2)->Range(1 << 10, 1 << 16)->Complexity(benchmark::oN);
BENCHMARK(upstream_html_page)->RangeMultiplier(2)->Range(1 << 10, 1 << 16)->Complexity(benchmark::oN);
BENCHMARK(upstream_json_repeated_key)->RangeMultiplier(2)->Range(1 << 10, 1 << 16)->Complexity(benchmark::oN);
BENCHMARK(upstream_html_attributes)->RangeMultiplier(2)->Range(1 << 10, 1 << 16)->Complexity(benchmark::oN);

}  // namespace
