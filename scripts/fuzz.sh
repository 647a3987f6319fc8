#!/usr/bin/env bash
# Fuzzes the readers of hostile text (docs/reliability.md "Fuzzing"): builds the libFuzzer
# targets with clang under ASan + UBSan and runs each for SECONDS, seeded with the shipped
# scenarios, profiles and nccl-tests logs and every input that once crashed (tests/fuzz/regressions).
#   scripts/fuzz.sh [SECONDS per target, default 60; 0 builds only] [BUILD_DIR, default build-fuzz]
# A crash, a leak, a hang (> 10 s on one input) or a 2 GB allocation stops that target, leaves the
# input in BUILD_DIR/crashes/TARGET/ and makes the script exit 1. Copy such an input into
# tests/fuzz/regressions/TARGET/ once fixed: the fuzz_TARGET_replay ctest replays it in every build.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
build=$(realpath -m "${2:-build-fuzz}")
root=$PWD
targets=(scenario profile nccl_tests topo chakra trace pftrace)

launcher=()
if command -v ccache >/dev/null; then
  launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
fi
# A build already configured with CLUSTERSIM_FUZZ=ON (CI's sanitizer build, which also runs the
# tests) is used as it is; otherwise a fuzz-only build: -O1 and line tables only, a quicker
# build, and stack traces that still name file and line.
if ! grep -qs '^CLUSTERSIM_FUZZ:BOOL=ON$' "$build/CMakeCache.txt"; then
  CC=clang CXX=clang++ cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=None \
    -DCMAKE_CXX_FLAGS="-O1 -gline-tables-only" \
    -DCLUSTERSIM_FUZZ=ON -DCLUSTERSIM_BUILD_TESTS=OFF -DCLUSTERSIM_BUILD_BENCH=OFF \
    -DCLUSTERSIM_WITH_CUDA=OFF -DCLUSTERSIM_WITH_MPI=OFF -DCLUSTERSIM_WITH_GUI=OFF "${launcher[@]}" >/dev/null
fi
cmake --build "$build" -j2 --target "${targets[@]/#/fuzz_}"
[ "$seconds" -gt 0 ] || exit 0

# Seeds per target: the files its reader meets in the project.
seeds_scenario=(scenarios tests/data/bad tests/data/scenarios tests/data/calibration)
seeds_profile=(tests/data/calibration tests/data/bad tests/data/scenarios/calibration.json)
seeds_nccl_tests=(tests/data/nccl-tests tests/data/bad)
seeds_topo=(tests/data/topo tests/data/bad)
seeds_chakra=(tests/data/chakra)
seeds_trace=(tests/data/traces tests/data/bad)
seeds_pftrace=(tests/data/traces tests/data/bad)

# One target: its corpus, its seeds, SECONDS of fuzzing; the log goes to $build/logs/TARGET.log.
fuzz_one() {
  local t=$1 corpus="$build/corpus/$1" crashes="$build/crashes/$1" seeds_var="seeds_${1}[@]"
  mkdir -p "$corpus" "$crashes"
  # libFuzzer takes only folders as corpora: a lone seed file is copied into the working corpus.
  local seed_dirs=() s
  for s in "${!seeds_var}" "tests/fuzz/regressions/$t"; do
    if [ -d "$s" ]; then seed_dirs+=("$root/$s"); else cp "$s" "$corpus/"; fi
  done
  # Relative paths in scenarios (config.json) resolve from tests/data/scenarios, as in the replay.
  # FUZZ_HALF: targets fuzzed for half of SECONDS (CI's trace readers, beyond issue 10's list).
  local secs=$seconds
  if [[ " ${FUZZ_HALF:-} " == *" $t "* ]]; then secs=$((seconds / 2)); fi
  (cd tests/data/scenarios && "$build/tests/fuzz/fuzz_$t" -max_total_time="$secs" -timeout=10 \
    -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="$crashes/" \
    "$corpus" "${seed_dirs[@]}")
}

# The targets run side by side, one per core (each fuzzer is single-threaded): on CI's 2 cores
# the seven take 4 × SECONDS instead of 7 × SECONDS.
mkdir -p "$build/logs"
for t in "${targets[@]}"; do
  while [ "$(jobs -rp | wc -l)" -ge "$(nproc)" ]; do wait -n || true; done
  echo "== fuzz_$t for ${seconds}s =="
  rm -f "$build/logs/$t.failed"
  (if ! fuzz_one "$t" >"$build/logs/$t.log" 2>&1; then touch "$build/logs/$t.failed"; fi) &
done
wait
failed=()
for t in "${targets[@]}"; do
  echo "== fuzz_$t: the last lines of $build/logs/$t.log =="
  tail -n 40 "$build/logs/$t.log"
  if [ -e "$build/logs/$t.failed" ]; then failed+=("$t"); fi
done

if [ ${#failed[@]} -ne 0 ]; then
  echo "fuzz: crashes in ${failed[*]}; inputs under $build/crashes/" >&2
  exit 1
fi
echo "fuzz: no crash in ${targets[*]} (${seconds}s each)"
