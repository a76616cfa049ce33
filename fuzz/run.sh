#!/usr/bin/env bash
# Runs the fuzz targets built by the `fuzz` preset, two at a time, each for SECONDS.
#   fuzz/run.sh [SECONDS] [TARGET...]      default: 20 seconds, every target
# Each target starts from its seeds (fuzz/seeds.py, from tests/data) and its corpus in
# build/fuzz/corpus/<target>/, which grows from run to run; libFuzzer writes what it finds to
# build/fuzz/crashes/<target>/ and its log to build/fuzz/logs/<target>.log. Exits non-zero when
# any target found something (a sanitizer report, a broken property, a hang or a leak).
set -euo pipefail
cd "$(dirname "$0")/.."

seconds=${1:-20}
shift || true
build=build/fuzz
bin=$build/fuzz
[[ -d $bin ]] || { echo "no fuzz build: cmake --preset fuzz && cmake --build --preset fuzz" >&2; exit 2; }
if (($#)); then targets=("$@"); else mapfile -t targets < <(cd "$bin" && ls *_fuzz); fi

python3 fuzz/seeds.py "$build/seeds"
export ASAN_OPTIONS="detect_leaks=1:abort_on_error=1:strict_string_checks=1"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"

run_one() {
    local target=$1
    local corpus=$build/corpus/$target crashes=$build/crashes/$target/ log=$build/logs/$target.log
    local dictionary=fuzz/dictionaries/$target.dict
    mkdir -p "$corpus" "$crashes" "$build/logs"
    local options=(-max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=65536
                   -artifact_prefix="$crashes" -print_final_stats=1)
    [[ -f $dictionary ]] && options+=(-dict="$dictionary")
    # New inputs go to the corpus (first folder); the seeds are read only.
    if nice "$bin/$target" "${options[@]}" "$corpus" "$build/seeds/$target" >"$log" 2>&1; then
        echo "$target: $(grep -E '^#[0-9]+[[:space:]]+DONE' "$log" | tail -1)"
    else
        echo "$target: FOUND SOMETHING, see $log and $crashes" >&2
        grep -E 'ERROR|property broken|SUMMARY' "$log" | head -5 >&2
        return 1
    fi
}

failed=0
running=0
for target in "${targets[@]}"; do
    run_one "$target" &
    running=$((running + 1))
    if ((running == 2)); then
        wait -n || failed=1
        running=$((running - 1))
    fi
done
while ((running > 0)); do
    wait -n || failed=1
    running=$((running - 1))
done
exit "$failed"
