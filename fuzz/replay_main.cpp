// Replays saved inputs through the fuzz targets' own checks, without libFuzzer: ctest runs
// `fuzz_replay TARGET FOLDER` over fuzz/regressions/TARGET/, the inputs that once broke a
// property or tripped a sanitizer, in the release and ASan builds (so under g++ as well).
// Each target's LLVMFuzzerTestOneInput is compiled under the name <target>_entry.

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <string_view>
#include <vector>

#define WHEELHOUSE_FUZZ_TARGET(name) extern "C" int name##_entry(const std::uint8_t*, std::size_t);
#include "fuzz_targets.inc"
#undef WHEELHOUSE_FUZZ_TARGET

namespace {

using entry_point = int (*)(const std::uint8_t*, std::size_t);

struct target {
    std::string_view name;
    entry_point entry;
};

const target targets[] = {
#define WHEELHOUSE_FUZZ_TARGET(name) {#name, name##_entry},
#include "fuzz_targets.inc"
#undef WHEELHOUSE_FUZZ_TARGET
};

}  // namespace

int main(int argc, char** argv) {
    if (argc != 3) {
        std::fprintf(stderr, "usage: fuzz_replay TARGET FOLDER\n");
        return 2;
    }
    const std::string_view wanted = argv[1];
    entry_point entry = nullptr;
    for (const auto& candidate : targets) {
        if (candidate.name == wanted) entry = candidate.entry;
    }
    if (entry == nullptr) {
        std::fprintf(stderr, "no fuzz target named %s\n", argv[1]);
        return 2;
    }
    std::size_t replayed = 0;
    for (const auto& file : std::filesystem::directory_iterator(argv[2])) {
        std::ifstream in(file.path(), std::ios::binary);
        const std::vector<char> bytes{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
        std::printf("%s\n", file.path().filename().c_str());
        std::fflush(stdout);
        entry(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size());
        ++replayed;
    }
    // A folder with nothing in it would pass without checking anything.
    if (replayed == 0) {
        std::fprintf(stderr, "no inputs in %s\n", argv[2]);
        return 1;
    }
    std::printf("%zu inputs replayed through %s without a finding\n", replayed, argv[1]);
    return 0;
}
