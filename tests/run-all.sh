#!/usr/bin/env bash
# Builds both configurations once and runs every test: unit and server tests in the optimised
# build and again under ASan+UBSan, each fuzz target briefly (clang), then the end-to-end tests
# (real pip, twine, curl, Chromium) against the optimised binary.
set -euo pipefail
cd "$(dirname "$0")/.."

jobs=$(nproc)
export CCACHE_DIR="${CCACHE_DIR:-$HOME/.cache/ccache}"
# Relative paths in cache keys, so a fresh clone elsewhere reuses the cache.
export CCACHE_BASEDIR="$PWD" CCACHE_NOHASHDIR=1
export ASAN_OPTIONS="detect_leaks=1:abort_on_error=1:strict_string_checks=1"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"

# Each phase's wall time, so a slow CI run says where its minutes went.
phase() { echo "== $(date -u +%T) +${SECONDS}s: $*"; }

for preset in release asan; do
  phase "build and test: $preset"
  cmake --preset "$preset" >/dev/null
  cmake --build --preset "$preset" -j "$jobs"
  ctest --preset "$preset" -j "$jobs"
done

# Every fuzz target briefly (clang 14, ASan+UBSan), so a regression in a parser shows; README
# "Fuzzing" says how to run them for hours.
phase "fuzz"
cmake --preset fuzz >/dev/null
cmake --build --preset fuzz -j "$jobs"
bash fuzz/run.sh "${WHEELHOUSE_FUZZ_SECONDS:-10}"

export WHEELHOUSE_BIN="$PWD/build/release/server/wheelhouse"
# The container tests build the image with podman, which needs local Debian base images here (no
# registry): shared/tools/container-setup.sh beside the clone makes them. Without it, or with
# WHEELHOUSE_CONTAINER_TESTS=0, they are skipped and say why.
container_setup=../shared/tools/container-setup.sh
if [[ ${WHEELHOUSE_CONTAINER_TESTS:-} != 0 && -f $container_setup ]]; then
  bash "$container_setup"
  export WHEELHOUSE_CONTAINER_TESTS=1
fi
# The end-to-end tests mostly wait on pip, twine and the servers they start, so three workers
# (pytest-xdist, a file's tests together for its fixtures) share the two cores.
phase "end to end"
/usr/bin/python3 -m pytest -q -p no:cacheprovider -n "${WHEELHOUSE_E2E_WORKERS:-3}" --dist loadfile tests/e2e
phase "done"
