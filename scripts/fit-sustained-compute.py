#!/usr/bin/env python3
"""Fit a GPU family's sustained_compute fraction on the published validation suite.

How docs/fidelity.md ("Sustained compute") obtained the preset values: every training case of
validation/training/ whose cluster names the family (e.g. A100: `dgx-a100` or `A100-SXM4-80GB`) is
run with `clustersim validate --set cluster.gpu.sustained_compute=F` for F on a coarse grid, then
on a fine grid around the best; the fraction kept is the one with the smallest median |error| over
the family's time and throughput figures (ties: the smaller mean |error|). The held-out data
(README) are not in validation/ and so never enter the fit.

  scripts/fit-sustained-compute.py --family a100 [--clustersim build/cli/clustersim]

Prints one line per fraction tried and the best; takes minutes per fraction for A100 (the
530B and 1T Megatron cases dominate).
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def family_cases(family):
    """Training cases whose `cluster:` block names the family (node or GPU preset)."""
    pattern = re.compile(r"\b" + family + r"\b", re.IGNORECASE)
    folder = os.path.join(ROOT, "validation", "training")
    picked = []
    for name in sorted(os.listdir(folder)):
        if not name.endswith(".yaml"):
            continue
        with open(os.path.join(folder, name), encoding="utf-8") as f:
            text = f.read()
        cluster = re.search(r"^cluster:.*(?:\n[ \t]+.*)*", text, re.MULTILINE)
        if cluster and pattern.search(cluster.group(0)):
            picked.append(os.path.join(folder, name))
    return picked


def errors_at(clustersim, folder, fraction):
    with tempfile.TemporaryDirectory() as tmp:
        report = os.path.join(tmp, "report.json")
        subprocess.run(
            [clustersim, "validate", folder, "--json", report, "--set",
             "cluster.gpu.sustained_compute=%.4f" % fraction],
            check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        with open(report, encoding="utf-8") as f:
            rows = json.load(f)["cases"]
    return [abs(r["error"]) for r in rows if r["kind"] == "time" and "failure" not in r]


def score(clustersim, folder, fraction):
    e = errors_at(clustersim, folder, fraction)
    if not e:
        sys.exit("no case of the family could be simulated")
    s = (statistics.median(e), statistics.fmean(e), max(e), len(e))
    print("sustained_compute %.2f: median %.1f %%, mean %.1f %%, worst %.1f %% over %d figures"
          % (fraction, 100 * s[0], 100 * s[1], 100 * s[2], s[3]), flush=True)
    return s


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--family", required=True, help="a100, h100, v100, b200, ...")
    ap.add_argument("--clustersim", default=os.path.join(ROOT, "build", "cli", "clustersim"))
    ap.add_argument("--coarse", default="0.60,0.70,0.80,0.90,1.00")
    args = ap.parse_args()
    cases = family_cases(args.family.lower())
    if not cases:
        sys.exit("no training case names the family '%s'" % args.family)
    print("%d cases: %s" % (len(cases), ", ".join(os.path.basename(c) for c in cases)))
    with tempfile.TemporaryDirectory() as folder:
        for c in cases:
            os.symlink(c, os.path.join(folder, os.path.basename(c)))
        tried = {}
        for f in (float(x) for x in args.coarse.split(",")):
            tried[f] = score(args.clustersim, folder, f)
        best = min(tried, key=lambda f: tried[f][:2])
        for step in (0.05, 0.02, 0.01):
            for f in (best - step, best + step):
                f = round(f, 2)
                if 0 < f <= 1 and f not in tried:
                    tried[f] = score(args.clustersim, folder, f)
            best = min(tried, key=lambda f: tried[f][:2])
    m = tried[best]
    print("best sustained_compute for %s: %.2f (median %.1f %%, worst %.1f %%)"
          % (args.family, best, 100 * m[0], 100 * m[2]))


if __name__ == "__main__":
    main()
