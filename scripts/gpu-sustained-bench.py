#!/usr/bin/env python3
"""What a GPU sustains under a long training-like load, against the same kernels run briefly
(docs/fidelity.md "Sustained compute"; run by scripts/gpu-check.sh with SUSTAINED=1):
- sustained: one Llama 3 8B decoder layer (scripts/gpu-kernel-bench.py's), forward + backward, run
  back to back for DURATION seconds; the time of each block of 10 steps, so the first seconds
  (cold, full clocks) compare with the last (hot, at the power limit). Pair it with
  `nvidia-smi --query-gpu=... -lms 500` for the clocks and power over the same seconds.
- fp8: torch._scaled_mm (cuBLASLt, e4m3, per-tensor scales, bf16 out) with and without fast
  accumulation, at a few transformer shapes (Transformer Engine uses fast accumulation for the
  forward GEMM).
- fp8 burst length: one fp8 GEMM timed over 20 calls (about 4 ms, as the part above times it)
  and back to back for 50 ms (as `clustersim calibrate` times each GEMM) and 1 s, from a GPU
  left idle for 2 s, with the SM clock NVML reports before and after each. On 4 Dec 2026 the
  20-call figure was 1,398 TFLOP/s where the calibration's 50 ms one was 1,166-1,290
  (validation/hardware/h200-2026-12-04/README.md); if the gap is the 700 W cap pulling the clock
  down within tens of ms, the 50 ms and 1 s figures fall to the calibration's.

Usage: scripts/gpu-sustained-bench.py OUT.json [DURATION_S]
"""
import importlib.util
import json
import os
import subprocess
import sys
import time

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location("kernel_bench", os.path.join(HERE, "gpu-kernel-bench.py"))
kb = importlib.util.module_from_spec(spec)
spec.loader.exec_module(kb)


def sustained(duration):
    dev = torch.device("cuda", 0)
    layer = kb.DecoderLayer(4096, 32, 8, 14336).to(dev, torch.bfloat16)
    x = torch.randn(1, 8192, 4096, device=dev, dtype=torch.bfloat16, requires_grad=True)
    grad = torch.randn(1, 8192, 4096, device=dev, dtype=torch.bfloat16)

    def step():
        layer(x).backward(grad)

    for _ in range(3):
        step()
    torch.cuda.synchronize()
    blocks = []
    start = time.time()
    while time.time() - start < duration:
        begin, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        begin.record()
        for _ in range(10):
            step()
        end.record()
        end.synchronize()
        blocks.append({"t_s": time.time() - start, "step_s": begin.elapsed_time(end) * 1e-3 / 10})
    first = blocks[0]["step_s"]
    last = sum(b["step_s"] for b in blocks[-10:]) / len(blocks[-10:])
    print(f"# sustained: {len(blocks) * 10} steps in {duration} s; first block {first * 1e3:.3f} ms "
          f"a step, last ten blocks {last * 1e3:.3f} ms ({first / last:.3f} of the first's rate)")
    return blocks


def fp8_fast_accum():
    dev = torch.device("cuda", 0)
    rows = []
    print("# fp8 torch._scaled_mm, TFLOP/s without / with fast accumulation")
    for m, n, k in ((8192, 4096, 4096), (8192, 14336, 4096), (8192, 4096, 14336),
                    (8192, 8192, 8192), (8192, 6144, 4096), (8192, 28672, 8192)):
        row = {"m": m, "n": n, "k": k}
        try:
            a = torch.randn(m, k, device=dev).to(torch.float8_e4m3fn)
            b = torch.randn(n, k, device=dev).to(torch.float8_e4m3fn).t()  # column-major, as TN
            one = torch.ones((), device=dev)
            for fast in (False, True):
                s = kb.timed(lambda: torch._scaled_mm(a, b, scale_a=one, scale_b=one,
                                                      out_dtype=torch.bfloat16,
                                                      use_fast_accum=fast), iters=20)
                row["fast" if fast else "exact"] = {"seconds": s, "flops_per_s": 2.0 * m * n * k / s}
            print(f"  {m:6} {n:6} {k:6}  {row['exact']['flops_per_s'] / 1e12:7.1f} "
                  f"{row['fast']['flops_per_s'] / 1e12:7.1f}")
        except Exception as e:
            row["error"] = kb.failure(e)
            print(f"  {m:6} {n:6} {k:6}  not measured: {row['error']}")
        rows.append(row)
    return rows


def sm_clock_mhz():
    """The SM clock NVML reports now, through nvidia-smi (None where it cannot be read)."""
    try:
        out = subprocess.run(["nvidia-smi", "--query-gpu=clocks.sm", "--format=csv,noheader,nounits",
                              "-i", "0"], capture_output=True, text=True, timeout=10).stdout
        return int(out.strip().splitlines()[0])
    except Exception:
        return None


def fp8_burst_length():
    dev = torch.device("cuda", 0)
    m, n, k = 8192, 4096, 4096
    a = torch.randn(m, k, device=dev).to(torch.float8_e4m3fn)
    b = torch.randn(n, k, device=dev).to(torch.float8_e4m3fn).t()
    one = torch.ones((), device=dev)

    def gemm():
        torch._scaled_mm(a, b, scale_a=one, scale_b=one, out_dtype=torch.bfloat16)

    per_call = kb.timed(gemm, iters=20)
    rows = []
    print(f"# fp8 {m}x{n}x{k} by burst length (TFLOP/s, SM clock before -> after, MHz)")
    for label, seconds in (("20 calls", 20 * per_call), ("50 ms", 0.05), ("1 s", 1.0)):
        time.sleep(2.0)  # idle: the clock climbs back before each burst
        calls = max(1, round(seconds / per_call))
        before = sm_clock_mhz()
        s = kb.timed(gemm, iters=calls)
        after = sm_clock_mhz()
        row = {"burst": label, "calls": calls, "seconds": s, "flops_per_s": 2.0 * m * n * k / s,
               "sm_clock_before_mhz": before, "sm_clock_after_mhz": after}
        print(f"  {label:>8}  {row['flops_per_s'] / 1e12:7.1f}  {before} -> {after}")
        rows.append(row)
    return rows


def main():
    out = sys.argv[1]
    duration = float(sys.argv[2]) if len(sys.argv) > 2 else 60.0
    doc = {"gpu": torch.cuda.get_device_properties(0).name, "torch": torch.__version__,
           "duration_s": duration}
    for part, fn in (("fp8_fast_accumulation", fp8_fast_accum),
                     ("fp8_burst_length", fp8_burst_length),
                     ("sustained", lambda: sustained(duration))):
        try:
            doc[part] = fn()
        except Exception as e:
            doc[part] = {"error": kb.failure(e)}
            print(f"# {part} failed: {kb.failure(e)}")
    with open(out, "w") as f:
        json.dump(doc, f, indent=1)


if __name__ == "__main__":
    main()
