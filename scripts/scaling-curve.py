#!/usr/bin/env python3
"""The scaling curve of issue 11: one plan family, Llama 3 405B with TP 8 · PP 16 and data
parallelism growing (16 sequences of 8,192 tokens per data-parallel rank, so the ops grow with the
GPUs), from 128 to 16,384 GPUs (scenarios/llama3-405b-16384xh100.yaml with cluster.nodes and
training.global_batch set). Each size is one `clustersim run` under /usr/bin/time, one at a time,
once per simulation.fold asked for (`auto`: one replica with the network's check, as `clustersim
run` does; `none`: every rank): wall time, peak RSS and the simulator's events. Prints a Markdown
table per fold for docs/performance.md and, where matplotlib is installed, writes a PNG (log-log
wall time and peak RSS per GPU count).

  scripts/scaling-curve.py [--build build] [--max-gpus 16384] [--folds auto,none]
                           [--png docs/scaling-curve.png]
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

SCENARIO = "scenarios/llama3-405b-16384xh100.yaml"
GPUS_PER_NODE = 8
SEQUENCES_PER_DP_RANK = 16
MODEL_PARALLEL = 8 * 16  # TP · PP


def run_one(binary, gpus, fold, timeout_s):
    nodes = gpus // GPUS_PER_NODE
    dp = gpus // MODEL_PARALLEL
    with tempfile.TemporaryDirectory() as tmp:
        result = os.path.join(tmp, "r.json")
        timing = os.path.join(tmp, "time")
        cmd = ["/usr/bin/time", "-f", "%e %M", "-o", timing, binary, "run", SCENARIO,
               "--set", f"cluster.nodes={nodes}",
               "--set", f"training.global_batch={SEQUENCES_PER_DP_RANK * dp}",
               "--set", f"simulation.fold={fold}", "--json", result]
        try:
            subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                           timeout=timeout_s)
        except subprocess.TimeoutExpired:
            return None
        wall_s, rss_kb = open(timing).read().split()[-2:]
        out = json.load(open(result))
        events = out["simulator"]["events"]
        folded = any("the links carried every replica's traffic" in n for n in out["notes"])
    return {"gpus": gpus, "dp": dp, "wall_s": float(wall_s), "rss_mb": int(rss_kb) / 1024,
            "events": events, "folded": folded}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--build", default="build")
    parser.add_argument("--max-gpus", type=int, default=16384)
    parser.add_argument("--timeout", type=float, default=600, help="seconds per size")
    parser.add_argument("--folds", default="auto,none", help="simulation.fold values")
    parser.add_argument("--png", default="docs/scaling-curve.png")
    args = parser.parse_args()
    os.chdir(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    binary = os.path.join(args.build, "cli", "clustersim")
    curves = {}
    for fold in args.folds.split(","):
        rows = curves.setdefault(fold, [])
        gpus = MODEL_PARALLEL
        while gpus <= args.max_gpus:
            row = run_one(binary, gpus, fold, args.timeout)
            if row is None:
                print(f"fold {fold}, {gpus} GPUs: stopped after {args.timeout:.0f} s",
                      file=sys.stderr)
                break
            rows.append(row)
            print(f"fold {fold}, {gpus} GPUs: {row['wall_s']} s, {row['rss_mb']:.0f} MB",
                  file=sys.stderr)
            gpus *= 2
        print(f"\nsimulation.fold: {fold}\n")
        print("| GPUs | DP | replicas simulated | events | wall (s) | events/s | peak RSS (MB) | "
              "wall per event (µs) |")
        print("|---|---|---|---|---|---|---|---|")
        for r in rows:
            simulated = "1 (checked)" if r["folded"] else "all"
            print(f"| {r['gpus']:,} | {r['dp']} | {simulated} | {r['events']:,} | "
                  f"{r['wall_s']:.2f} | {r['events'] / r['wall_s'] / 1e6:.2f} M | "
                  f"{r['rss_mb']:,.0f} | {r['wall_s'] / r['events'] * 1e6:.2f} |")
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib not installed: no PNG written", file=sys.stderr)
        return
    fig, ax = plt.subplots(figsize=(6, 4))
    for fold, rows in curves.items():
        xs = [r["gpus"] for r in rows]
        ax.loglog(xs, [r["wall_s"] for r in rows], "o-", label=f"wall time (s), fold: {fold}")
        ax.loglog(xs, [r["rss_mb"] / 1024 for r in rows], "s--",
                  label=f"peak RSS (GB), fold: {fold}")
    ax.set_xlabel("GPUs (Llama 3 405B, TP 8 · PP 16, DP growing)")
    ax.set_title("clustersim: one prediction, flow model")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(args.png, dpi=100, metadata={"Software": None})
    print(f"wrote {args.png}", file=sys.stderr)


if __name__ == "__main__":
    main()
