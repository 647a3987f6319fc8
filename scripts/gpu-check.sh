#!/usr/bin/env bash
# GPU check (docs/calibration.md "Running the CUDA back end on a GPU machine"), run on the GPU
# machine from the bundle scripts/gpu-bundle.sh packed into .gpu/ (that machine has CUDA, NCCL and
# PyTorch but not this project's build dependencies):
#   1. `clustersim calibrate --backend cuda` (full sweeps) with the GEMM shapes of the Hopper
#      scenarios and validation cases, into $OUT/profile.json;
#   2. scripts/gpu-kernel-bench.py: attention, memory-bound kernels and a decoder layer through
#      PyTorch, into $OUT/kernels.json;
#   3. scripts/gpu-sustained-bench.py: a decoder layer run back to back for 60 s with the clocks
#      and power logged every 0.5 s (nvidia-smi), fp8 GEMMs with and without fast accumulation,
#      and one fp8 GEMM by burst length (20 calls, 50 ms, 1 s), into $OUT/sustained.json and
#      $OUT/smi.csv;
#   4. a summary of the profile's figures worth a glance.
# Usage: OUT=dir [STEPS="calibrate kernels sustained"] scripts/gpu-check.sh   (OUT: gpu-out)
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-gpu-out}
mkdir -p "$OUT"
[ -x .gpu/clustersim ] || { echo "no .gpu/clustersim: run scripts/gpu-bundle.sh first" >&2; exit 2; }

# The machine's cuBLAS and NCCL: the CUDA toolkit's, else PyTorch's wheels (nvidia-*-cu13).
libdir_of() { find /usr/local/cuda* /usr/lib /opt -name "$1" 2>/dev/null | head -1 | xargs -r dirname; }
MACHINE_LD_PATH=${LD_LIBRARY_PATH:-}  # PyTorch below needs its own cuDNN, not the toolkit's
LIBS=$(libdir_of 'libcublasLt.so.13*'):$(libdir_of 'libcublas.so.13*'):$(libdir_of 'libnccl.so.2*')
export LD_LIBRARY_PATH=$LIBS:$PWD/.gpu/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
if ! .gpu/clustersim --version >/dev/null 2>&1; then
  export LD_LIBRARY_PATH=$LD_LIBRARY_PATH:$PWD/.gpu/fallback
fi
echo "LD_LIBRARY_PATH=$LD_LIBRARY_PATH"
ldd .gpu/clustersim-calibrate-cuda | grep -E "not found|cublas|nccl|stdc" || true
nvidia-smi -L || true
nvidia-smi topo -m || true
nvidia-smi -q -d CLOCK,POWER,PERFORMANCE >"$OUT/nvidia-smi.txt" 2>&1 || true

STEPS=${STEPS:-calibrate kernels sustained}
step() { [[ " $STEPS " == *" $1 "* ]]; }

SHAPES=()
for s in scenarios/llama3-70b-8xdgx-h100-interleaved.yaml scenarios/mixtral-8x7b-ep8-dgx-h100.yaml \
  validation/training/nemo2511-llama3-70b-64xh100-fp8.yaml \
  validation/training/nemo2511-llama3-8b-8xh100-fsdp-fp8.yaml \
  validation/training/nemo2511-llama31-405b-1024xh100-fp8.yaml \
  validation/training/nemo2407-gpt3-175b-128xh100-fp8.yaml \
  validation/training/nemo2407-llama2-7b-8xh100-fp8.yaml \
  validation/training/mcore-mixtral-8x7b-64xh100.yaml \
  validation/training/korthikanti-22b-selective-sp.yaml \
  validation/training/fms-fsdp-llama2-7b-128xa100.yaml; do
  SHAPES+=(--shapes-from "$s")
done
if step calibrate; then
  start=$(date +%s)
  .gpu/clustersim calibrate --backend cuda --out "$OUT/profile.json" "${SHAPES[@]}" 2>&1 |
    tee "$OUT/calibrate.log"
  echo "calibrate took $(($(date +%s) - start)) s"
fi

if step kernels; then
  start=$(date +%s)
  LD_LIBRARY_PATH=$MACHINE_LD_PATH PYTHONUNBUFFERED=1 python3 -W ignore scripts/gpu-kernel-bench.py \
    "$OUT/kernels.json" attention,attention_extra,memory_bound,layers 2>&1 | tee "$OUT/kernels.log"
  echo "kernel bench took $(($(date +%s) - start)) s"
fi

if step sustained; then
  nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu,clocks_event_reasons.active \
    --format=csv -lms 500 >"$OUT/smi.csv" 2>&1 &
  smi=$!
  LD_LIBRARY_PATH=$MACHINE_LD_PATH PYTHONUNBUFFERED=1 python3 -W ignore scripts/gpu-sustained-bench.py \
    "$OUT/sustained.json" 60 2>&1 | tee "$OUT/sustained.log"
  kill "$smi" 2>/dev/null
fi

step calibrate || exit 0
[ -f "$OUT/profile.json" ] || exit 1
python3 - "$OUT/profile.json" <<'PY' | tee "$OUT/summary.txt"
import json, sys
p = json.load(open(sys.argv[1]))
prov, m = p["provenance"], p["measurements"]
print(f"GPUs: {prov['ranks']} x {prov['gpu']}, driver {prov['driver_version']}, "
      f"runtime {prov['runtime_version']}, NCCL {prov['nccl_version']}")
for d in ("d2d", "h2d", "d2h", "peer"):
    rows = [c for c in m["copies"] if c["direction"] == d]
    if rows:
        best = max(rows, key=lambda c: c["bandwidth"])
        print(f"copy {d:4}: best {best['bandwidth'] / 1e9:8.1f} GB/s at {best['bytes']:.0f} B")
for dt in ("fp32", "tf32", "fp16", "bf16", "fp8"):
    rows = [g for g in m["gemms"] if g["dtype"] == dt]
    if rows:
        best = max(rows, key=lambda g: g["flops_per_s"])
        print(f"GEMM {dt}: {len(rows)} shapes, best {best['flops_per_s'] / 1e12:.1f} TFLOP/s "
              f"at {best['m']}x{best['n']}x{best['k']}")
print(f"memory-bound bandwidth (fitted): "
      f"{p['fitted']['compute'].get('memory_bandwidth', 0) / 1e9:.1f} GB/s")
PY
