#!/usr/bin/env bash
# GPU check of the CUDA calibration backend (docs/calibration.md "gpu-check.sh"): configure with
# CUDA on, build the clustersim binary, run `clustersim calibrate --backend cuda --quick` and print
# the figures worth a glance: d2d copy bandwidth, bf16 GEMM TFLOP/s, NCCL bus bandwidths.
# Usage: scripts/gpu-check.sh [BUILD_DIR]   (writes $OUT/profile.json; OUT defaults to BUILD_DIR)
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build-gpu}
OUT=${OUT:-$BUILD}
mkdir -p "$OUT"
export PATH=/usr/local/cuda/bin:$PATH

cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCLUSTERSIM_WITH_CUDA=ON \
  -DCLUSTERSIM_WITH_GUI=OFF -DCLUSTERSIM_BUILD_TESTS=OFF -DCLUSTERSIM_BUILD_BENCH=OFF \
  -DCLUSTERSIM_WERROR=ON
cmake --build "$BUILD" -j "$(nproc)" --target clustersim

nvidia-smi -L || true
start=$(date +%s)
# Also the GEMM shapes a Llama 3 70B layer launches (docs/calibration.md "GEMM shapes of a
# scenario"), so the profile holds measured-vs-modelled points for the shapes that matter.
"$BUILD/cli/clustersim" calibrate --backend cuda --quick --out "$OUT/profile.json" \
  --shapes-from scenarios/llama3-70b-8xdgx-h100-interleaved.yaml | tee "$OUT/calibrate.log"
echo "calibrate --quick took $(( $(date +%s) - start )) s"

python3 - "$OUT/profile.json" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))
prov, m = p["provenance"], p["measurements"]
print(f"GPUs: {prov['ranks']} x {prov['gpu']}, driver {prov['driver_version']}, "
      f"runtime {prov['runtime_version']}, NCCL {prov['nccl_version']}, fabric {prov.get('topology', {}).get('fabric', '?')}")
for d in ("d2d", "h2d", "d2h", "peer"):
    rows = [c for c in m["copies"] if c["direction"] == d]
    if rows:
        best = max(rows, key=lambda c: c["bandwidth"])
        print(f"copy {d:4}: best {best['bandwidth'] / 1e9:8.1f} GB/s at {best['bytes']:.0f} B")
bf16 = [g for g in m["gemms"] if g["dtype"] == "bf16"]
if bf16:
    best = max(bf16, key=lambda g: g["flops_per_s"])
    print(f"GEMM bf16: best {best['flops_per_s'] / 1e12:.1f} TFLOP/s at {best['m']}x{best['n']}x{best['k']}")
# The scenario's 15 shapes are the last rows (the grid comes first).
for g in m["gemms"][-15:]:
    print(f"GEMM {g['dtype']} {g['m']}x{g['n']}x{g['k']} batch {g.get('batch', 1)}: "
          f"{g['flops_per_s'] / 1e12:.1f} TFLOP/s")
print(f"memory-bound bandwidth (fitted): {p['fitted']['compute'].get('memory_bandwidth', 0) / 1e9:.1f} GB/s")
wrong = sum(c["wrong"] or 0 for c in m["collectives"])
for f in p["fitted"]["collectives"]:
    rows = [c for c in m["collectives"] if c["collective"] == f["collective"]]
    big = max(rows, key=lambda c: c["bytes"]) if rows else None
    last = f["ranges"][-1]
    print(f"NCCL {f['collective']:14} {f['ranks']} ranks: fitted alpha {f['ranges'][0]['alpha_s'] * 1e6:.1f} us, "
          f"busbw {last['busbw'] / 1e9:.1f} GB/s; measured busbw at {big['bytes']:.0f} B: {big['busbw'] / 1e9:.1f} GB/s")
print(f"NCCL #wrong over all rows: {wrong}")
sys.exit(1 if wrong else 0)
PY
