#!/usr/bin/env python3
"""Writes the "bring your own logs" corpus (README.md, second table): nccl-tests / rccl-tests
output shaped like real job logs, generated from a known model t(S) = alpha + S*factor/busbw with
+-0.5 % uniform noise (fixed seed, so the files are reproducible)."""
import random

rng = random.Random(18)


def fmt_time(us):
    # nccl-tests: two decimals below 100 us, one below 10 ms, none above.
    if us >= 10000:
        return "%7.0f" % us
    if us >= 100:
        return "%7.1f" % us
    return "%7.2f" % us


def header(redop_root=True):
    return [
        "#",
        "#                                                              out-of-place                       in-place          ",
        "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong",
        "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)       ",
    ]


def rows(alpha_us, busbw_gbs, factor, sizes, redop="sum", noise_lines=None):
    out = []
    for i, size in enumerate(sizes):
        cells = []
        for _ in range(2):
            t = (alpha_us * 1e-6 + size * factor / (busbw_gbs * 1e9)) * (1 + rng.uniform(-0.005, 0.005))
            algbw = size / t / 1e9
            cells.append("%s %7.2f %7.2f %6d" % (fmt_time(t * 1e6), algbw, algbw * factor, 0))
        out.append("%12d  %12d  %8s  %6s  %6d  %s  %s" % (size, size // 4, "float", redop, -1, cells[0], cells[1]))
        if noise_lines and i in noise_lines:
            out.append(noise_lines[i])
    return out


def rank_lines(hosts_ranks, gpu, start_pid=4100):
    out = ["# Using devices"]
    rank = 0
    for host, n in hosts_ranks:
        for d in range(n):
            out.append("#  Rank %2d Group  0 Pid %6d on %10s device  %d [0000:%02x:00] %s"
                       % (rank, start_pid + rank, host, d, 0x07 + 0x10 * d, gpu))
            rank += 1
    return out


def footer(binary):
    return ["# Out of bounds values : 0 OK", "# Avg bus bandwidth    : 0 ", "#",
            "# Collective test concluded: %s" % binary, ""]


def starting(binary, ngpus, min_b, max_b):
    return ["# Collective test starting: %s" % binary,
            "# nThread 1 nGpus %d minBytes %d maxBytes %d step: 2(factor) warmup iters: 5 iters: 20 "
            "agg iters: 1 validation: 1 graph: 0" % (ngpus, min_b, max_b)]


def sweep(lo, hi):
    s, out = lo, []
    while s <= hi:
        out.append(s)
        s *= 2
    return out


def write(name, lines):
    with open(name, "w") as f:
        f.write("\n".join(lines) + "\n")


# A: Slurm job, 2 x 8 A100, the job's own prints first, NCCL's bare version line inside the header.
a = ["SLURM_JOB_NODELIST=gpu-a100-[001-002]", "SLURM_NTASKS=16", "SLURM_JOB_ID=48213",
     "+ srun --mpi=pmix ./build/all_reduce_perf -b 1K -e 1G -f 2 -g 1",
     "# nccl-tests version 2.17.1 nccl-headers=22903 nccl-library=22903"]
a += starting("all_reduce_perf", 1, 1024, 1 << 30) + ["#"]
a += rank_lines([("gpu-a100-001", 8), ("gpu-a100-002", 8)], "NVIDIA A100-SXM4-80GB")
a += ["NCCL version 2.29.3+cuda13.1"]
a += header()
a += rows(60.0, 45.0, 2 * 15 / 16, sweep(1024, 1 << 30), noise_lines={
    3: "gpu-a100-001:201:215 [0] NCCL INFO Channel 02/0 : 0[0] -> 8[0] [send] via NET/IB/0/GDRDMA",
    9: "[gpu-a100-002:00412] 15 more processes have sent help message help-mpi-btl-openib.txt / no active ports found",
    12: "/usr/lib/python3/dist-packages/torch/cuda/__init__.py:61: FutureWarning: pynvml is deprecated"})
a += footer("all_reduce_perf")
write("slurm_a100_2nodes.log", a)

# B: mpirun -g 1 over 2 x 8 B200 from a cloud guide: no device list at all.
b = ["Warning: Permanently added 'b200-node-1' (ED25519) to the list of known hosts.",
     "# nccl-tests version 2.17.6 nccl-headers=22803 nccl-library=22803"]
b += starting("all_reduce_perf", 1, 8192, 1 << 32) + ["#"]
b += header()
b += rows(45.0, 360.0, 2 * 15 / 16, sweep(8192, 1 << 32))
b += footer("all_reduce_perf")
write("b200_mpirun_g1.log", b)

# C: rccl-tests, all_reduce then all_gather in one file, 8 x MI300X on one host.
c = []
for binary, alpha, busbw, factor, redop in [("all_reduce_perf", 20.0, 300.0, 2 * 7 / 8, "sum"),
                                            ("all_gather_perf", 15.0, 280.0, 7 / 8, "none")]:
    c += starting(binary, 8, 1024, 1 << 30) + ["#", "rccl-tests: Version develop:5a1b2c3"]
    c += rank_lines([("mi300x-01", 8)], "AMD Instinct MI300X", start_pid=9632)
    c += ["RCCL version : 2.22.3-develop:0f1e2d3", "HIP version  : 6.4.43482-0f2d60242",
          "ROCm version : 6.4.1.0-83-a1b2c3d", "Hostname     : mi300x-01",
          "Librccl path : /opt/rocm/lib/librccl.so.1"]
    c += header()
    c += rows(alpha, busbw, factor, sweep(1024, 1 << 30), redop=redop)
    c += footer(binary)
write("rccl_mi300x_two_tests.log", c)

# D: srun -g 1, reduce_scatter over 2 x 8 H100; the saved log holds only node01's rank lines.
d = ["srun: job 51877 queued and waiting for resources", "srun: job 51877 has been allocated resources",
     "# nccl-tests version 2.17.1 nccl-headers=22602 nccl-library=22602"]
d += starting("reduce_scatter_perf", 1, 4096, 1 << 31) + ["#"]
d += rank_lines([("h100-node01", 8)], "NVIDIA H100 80GB HBM3")
d += header()
d += rows(50.0, 48.0, 15 / 16, sweep(4096, 1 << 31), noise_lines={
    5: "h100-node02:3321:3340 [3] NCCL WARN NET/IB : Got async event : port error"})
d += footer("reduce_scatter_perf")
write("srun_subset_ranks.log", d)

# E: the device list of an 8-rank run pasted over a 4-rank table: evidence that conflicts.
e = ["# nccl-tests version 2.17.1 nccl-headers=22602 nccl-library=22602"]
e += starting("all_reduce_perf", 8, 1024, 1 << 26) + ["#"]
e += rank_lines([("dgx01", 8)], "NVIDIA H100 80GB HBM3")
e += header()
e += rows(15.0, 200.0, 2 * 3 / 4, sweep(1024, 1 << 26))
e += footer("all_reduce_perf")
write("conflicting_ranks.log", e)
