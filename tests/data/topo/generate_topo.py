#!/usr/bin/env python3
"""Writes the `nvidia-smi topo -m` corpus of import-topo's tests (README.md): matrices laid out as
nvidia-smi prints them (tab-separated, legend after), for machines described by where each device
sits: NUMA node, PCIe host bridge, switch tree (root switch, leaf switch). The connection of two
devices follows nvidia-smi's legend: NV# where NVLink joins two GPUs, else PIX (one bridge: the
same leaf switch), PXB (several bridges: the same switch tree), PHB (the same host bridge), NODE
(the same NUMA node), SYS (across the SMP interconnect)."""

LEGEND = """
Legend:

  X    = Self
  SYS  = Connection traversing PCIe as well as the SMP interconnect between NUMA nodes (e.g., QPI/UPI)
  NODE = Connection traversing PCIe as well as the interconnect between PCIe Host Bridges within a NUMA node
  PHB  = Connection traversing PCIe as well as a PCIe Host Bridge (typically the CPU)
  PXB  = Connection traversing multiple PCIe bridges (without traversing the PCIe Host Bridge)
  PIX  = Connection traversing at most a single PCIe bridge
  NV#  = Connection traversing a bonded set of # NVLinks
"""


class Dev:
    def __init__(self, name, numa, hb, tree=None, leaf=None, cpus=None):
        self.name, self.numa, self.hb, self.tree, self.leaf, self.cpus = name, numa, hb, tree, leaf, cpus


def link(a, b, nvlink):
    if a is b:
        return " X "
    if (a.name, b.name) in nvlink:
        return "NV%d" % nvlink[(a.name, b.name)]
    if a.tree is not None and a.tree == b.tree:
        return "PIX" if a.leaf == b.leaf else "PXB"
    if a.hb == b.hb:
        return "PHB"
    return "NODE" if a.numa == b.numa else "SYS"


def matrix(gpus, nics, nvlink_pairs, columns=("CPU Affinity", "NUMA Affinity"), sep="\t"):
    nvlink = {}
    for (x, y), n in nvlink_pairs.items():
        nvlink[(x, y)] = nvlink[(y, x)] = n
    devs = gpus + nics
    out = [sep + sep.join(d.name for d in devs) + sep + sep.join(columns)]
    for d in devs:
        cells = [link(d, e, nvlink) for e in devs]
        if d in gpus:
            extra = {"CPU Affinity": d.cpus, "NUMA Affinity": str(d.numa), "GPU NUMA ID": "N/A"}
            cells += [extra[c] for c in columns]
        out.append(d.name + sep + sep.join(cells))
    return out


def nic_legend(names):
    return ["", "NIC Legend:", ""] + ["  NIC%d: %s" % (i, n) for i, n in enumerate(names)]


def all_pairs(n, links):
    return {("GPU%d" % i, "GPU%d" % j): links for i in range(n) for j in range(i + 1, n)}


def write(name, lines):
    with open(name, "w") as f:
        f.write("\n".join(lines) + "\n")


# DGX H100 (DGX H100 user guide, "Network ports"): 8 GPUs on 4 NVSwitches (NV18 to every peer);
# each GPU shares a PCIe switch tree with its own ConnectX-7 compute NIC (PXB); two storage NICs
# per CPU under their own switches (NODE to that CPU's GPUs); two sockets, NUMA 0 and 1.
cpus = ["0-55,112-167", "56-111,168-223"]
gpus = [Dev("GPU%d" % i, i // 4, "h%d" % i, tree="t%d" % i, leaf="g%d" % i, cpus=cpus[i // 4])
        for i in range(8)]
compute_for = {0: 0, 3: 1, 4: 2, 5: 3, 6: 4, 9: 5, 10: 6, 11: 7}  # NIC index -> its GPU
nics = []
for k in range(12):
    if k in compute_for:
        g = compute_for[k]
        nics.append(Dev("NIC%d" % k, g // 4, "h%d" % g, tree="t%d" % g, leaf="n%d" % g))
    else:  # storage / management: NIC1, NIC2 on CPU 0; NIC7, NIC8 on CPU 1
        numa = 0 if k < 6 else 1
        nics.append(Dev("NIC%d" % k, numa, "s%d" % k, tree="s%d" % k, leaf="s%d" % k))
names = ["mlx5_%d" % k for k in range(12)]
write("dgx_h100.txt", matrix(gpus, nics, all_pairs(8, 18),
                             columns=("CPU Affinity", "NUMA Affinity", "GPU NUMA ID"))
      + LEGEND.splitlines() + nic_legend(names))

# HGX H200 (8-GPU baseboard) in a cloud VM, pasted from a terminal where tabs became spaces, with
# the prompt and command above: each GPU under one PCIe switch with its own NIC (PIX).
gpus = [Dev("GPU%d" % i, i // 4, "h%d" % i, tree="t%d" % i, leaf="l%d" % i, cpus=cpus[i // 4])
        for i in range(8)]
nics = [Dev("NIC%d" % i, i // 4, "h%d" % i, tree="t%d" % i, leaf="l%d" % i) for i in range(8)]
lines = matrix(gpus, nics, all_pairs(8, 18), sep="\t")
pasted = ["ubuntu@h200-vm-0:~$ nvidia-smi topo -m"]
for line in lines:
    cells = line.split("\t")
    # A tab moves to the next multiple of 8 columns, at least one.
    pasted.append("".join(c.strip().ljust((len(c.strip()) // 8 + 1) * 8) for c in cells).rstrip())
write("hgx_h200_pasted.txt", pasted + LEGEND.splitlines()
      + nic_legend(["mlx5_%d" % i for i in range(8)]) + ["ubuntu@h200-vm-0:~$"])

# A 4U PCIe server, 8 x L40S (no NVLink), two PLX switch trees per CPU... one tree per CPU here:
# GPUs 0-3 under two leaf switches of one tree (PIX within a leaf, PXB across), GPUs 4-7 the same
# on CPU 1 (SYS between the halves); no NIC in the matrix; CPU affinity only (older driver).
cpus2 = ["0-31,64-95", "32-63,96-127"]
gpus = [Dev("GPU%d" % i, i // 4, i // 4, tree="t%d" % (i // 4), leaf="l%d" % (i // 2),
            cpus=cpus2[i // 4]) for i in range(8)]
write("pcie_pix_pxb_sys.txt", matrix(gpus, [], {}, columns=("CPU Affinity",)) + LEGEND.splitlines())

# 4 x A100 PCIe with NVLink bridges (NV12: three bridges per pair) between GPUs 0-1 and 2-3; each
# pair under a switch with one ConnectX-6 (PIX); a management NIC on CPU 0's root complex (PHB to
# GPUs 0-1, SYS to 2-3); CPU and NUMA affinity columns.
cpus3 = ["0-23,48-71", "24-47,72-95"]
gpus = [Dev("GPU%d" % i, i // 2, i // 2, tree="t%d" % (i // 2), leaf="l%d" % (i // 2),
            cpus=cpus3[i // 2]) for i in range(4)]
nics = [Dev("NIC0", 0, 0, tree="t0", leaf="l0"), Dev("NIC1", 1, 1, tree="t1", leaf="l1"),
        Dev("NIC2", 0, 0)]
write("pcie_bridges_nics_numa.txt",
      matrix(gpus, nics, {("GPU0", "GPU1"): 12, ("GPU2", "GPU3"): 12}) + LEGEND.splitlines()
      + nic_legend(["mlx5_0", "mlx5_1", "eno1np0"]))

# AWS p5.48xlarge (EC2 user guide, "EFA configuration for P5"): 8 x H100 on NVSwitch (NV18), 32
# EFA devices, four in each GPU's PCIe switch tree (PXB), two sockets.
cpus4 = ["0-47,96-143", "48-95,144-191"]
gpus = [Dev("GPU%d" % i, i // 4, "h%d" % i, tree="t%d" % i, leaf="g%d" % i, cpus=cpus4[i // 4])
        for i in range(8)]
nics = [Dev("NIC%d" % k, k // 16, "h%d" % (k // 4), tree="t%d" % (k // 4), leaf="n%d" % k)
        for k in range(32)]
write("aws_p5.txt", matrix(gpus, nics, all_pairs(8, 18)) + LEGEND.splitlines()
      + nic_legend(["rdmap%ds0" % (79 + 16 * k) for k in range(32)]))
