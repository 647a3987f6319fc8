#!/usr/bin/env bash
# Regenerates tests/data/pins/scenarios.json: each shipped scenario's key figures, which
# tests/cli/test_cli_scenarios.cpp compares within 1e-6 relative (issue 8, "regression pins").
# Run it only when a model changes on purpose, and review the diff in the commit that changes it:
#   scripts/update-pins.sh [BUILD_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
build="${1:-build}"
bin="$build/cli/clustersim"
[ -x "$bin" ] || { echo "error: $bin not built (cmake --build $build)" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for f in scenarios/*.yaml; do
  name=$(basename "$f")
  # Benchmark-sized (tests/cli/test_cli_scenarios.cpp benchmark_scenarios()): not pinned.
  [ "$name" = llama3-405b-16384xh100.yaml ] && continue
  "$bin" run "$f" --json "$tmp/$name.json" --reproducible > /dev/null
  jq --arg file "$name" '{($file): {
        iteration_time_s, tflops_per_gpu, bubble_fraction,
        exposed_comm_s: {dp: .exposed_comm_s.dp, tp: .exposed_comm_s.tp,
                         pp: .exposed_comm_s.pp, ep: .exposed_comm_s.ep},
        peak_bytes_per_gpu: .memory.peak_bytes_per_gpu}}' "$tmp/$name.json" > "$tmp/$name.pin"
done
jq -s --sort-keys 'add' "$tmp"/*.pin > tests/data/pins/scenarios.json.tmp
mv tests/data/pins/scenarios.json.tmp tests/data/pins/scenarios.json
echo "wrote tests/data/pins/scenarios.json ($(ls scenarios/*.yaml | wc -l) scenarios)"
