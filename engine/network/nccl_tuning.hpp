// NCCL's tuning-model constants (validation/collectives/NCCL_TUNING.md, from NVIDIA/nccl
// src/graph/tuning.cc at v2.30.7): base and per-hop latencies per algorithm and protocol, and the
// per-channel bandwidth limits. Figures restated, not code. Latencies in µs, bandwidths in GB/s.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>

#include "engine/network/transfer_plan.hpp"

namespace clustersim::engine::nccl {

// NCCL's algorithm rows used here.
enum class Row : int {
  tree = 0,
  ring = 1,
  collnet_direct = 2,
  collnet_chain = 3,
  nvls = 4,
  nvls_tree = 5
};
// Hardware classes of the per-hop latency table.
enum class Hw : int { nvlink = 0, pci = 1, net = 2 };

// baseLatencies[algorithm][protocol] (LL, LL128, Simple).
inline constexpr std::array<std::array<double, 3>, 6> kBaseLatency{{
    {6.8, 14.0, 8.4},  // tree
    {6.6, 14.0, 8.4},  // ring
    {0, 0, 0},         // collnet direct
    {0, 0, 0},         // collnet chain
    {0, 0, 0},         // nvls
    {0, 0, 0},         // nvls tree
}};

// hwLatencies[hw][algorithm][protocol].
inline constexpr std::array<std::array<std::array<double, 3>, 6>, 3> kHwLatency{{
    {{{0.6, 1.25, 4.0}, {0.6, 1.9, 3.4}, {0, 0, 3.7}, {0, 0, 2.8}, {0, 0, 25}, {0, 0, 25}}},
    {{{1.0, 1.9, 4.0}, {1.0, 2.5, 5.7}, {0, 0, 3.7}, {0, 0, 2.8}, {0, 0, 0}, {0, 0, 0}}},
    {{{5.0, 8.5, 14}, {2.7, 4.0, 14.0}, {0, 0, 31}, {0, 0, 30}, {0, 0, 18}, {0, 0, 20.9}}},
}};

// getNetOverhead (src/graph/tuning.cc, from v2.18): the per-step floor of a ring across nodes,
// µs; 2 on AMD x86 hosts, 1 on Intel and others.
inline double net_overhead_us(bool amd_cpu) {
  return amd_cpu ? 2.0 : 1.0;
}

inline double base_latency(Row a, Protocol p) {
  return kBaseLatency[static_cast<int>(a)][static_cast<int>(p)];
}
inline double hw_latency(Hw h, Row a, Protocol p) {
  return kHwLatency[static_cast<int>(h)][static_cast<int>(a)][static_cast<int>(p)];
}

// Architecture index of the per-channel tables: Volta, Ampere, Hopper, Blackwell.
inline int arch_index(int gpu_arch) {
  return gpu_arch >= 100 ? 3 : gpu_arch >= 90 ? 2 : gpu_arch >= 80 ? 1 : 0;
}
// Column: one node, two nodes, three or more.
inline int nodes_index(int nodes) {
  return nodes <= 2 ? nodes - 1 : 2;
}

// llMaxBws: one node by architecture; across nodes by CPU vendor (row 0 Intel and others, row 1
// AMD: "Ampere-N1/AMD-N2/AMD-N4", src/graph/tuning.cc; the same rows in v2.17.1).
inline double ll_max_bw(int gpu_arch, int nodes, bool amd_cpu = false) {
  constexpr std::array<double, 4> single{39.0, 87.7, 141.0, 282.0};
  if (nodes == 1) return single[arch_index(gpu_arch)];
  if (amd_cpu) return nodes == 2 ? 22.5 : 19.0;
  return nodes == 2 ? 39.0 : 20.4;
}

inline constexpr std::array<std::array<double, 3>, 4> kPerChMaxRingLL128{
    {{20.0, 20.0, 20.0}, {20.0, 20.0, 20.0}, {36.7, 36.7, 36.7}, {40.0, 40.0, 40.0}}};
inline constexpr std::array<std::array<double, 3>, 4> kPerChMaxTreeLL128{
    {{20.0, 20.0, 20.0}, {20.0, 20.0, 20.0}, {36.7, 36.7, 29.0}, {55.6, 31.67, 20.0}}};
inline constexpr std::array<std::array<double, 3>, 4> kPerChMaxTree{
    {{26.5, 18.5, 10.0}, {24.0, 23.6, 17.8}, {38.7, 41.4, 36.0}, {70.0, 42.8, 24.0}}};
inline constexpr std::array<std::array<double, 3>, 4> kPerChMaxNvlsTree{
    {{26.5, 18.5, 10.0}, {24.0, 23.6, 17.8}, {0.0, 57.7, 45.5}, {0.0, 96.0, 80.0}}};

inline double per_channel(const std::array<std::array<double, 3>, 4>& table, int gpu_arch,
                          int nodes) {
  return table[arch_index(gpu_arch)][nodes_index(nodes)];
}

// nvlsEfficiency: Hopper 0.85, Blackwell 0.74 (none before Hopper).
inline double nvls_efficiency(int gpu_arch) {
  return gpu_arch >= 100 ? 0.74 : gpu_arch >= 90 ? 0.85 : 0.0;
}
// The share of NVLS's NVLink rate NVLSTree (NVLS inside the node, a tree across nodes) reaches,
// as run rather than as NCCL's tuner rates it (the tuner rates both alike). Fitted: the published
// two-node NVLSTree all_reduce plateaus at the bus bandwidth of one-node NVLS, not the 2(n-1)/n
// share above it that equal NVLink work would give. Algorithm bandwidth two nodes / one node:
// H100 248.9 / 270.6 = 0.920 (nccl-tests #309 gjaion, 8 GiB) and 250.2 / 270.6 = 0.925 (#309
// qoofyk, 16 GiB) against nccl-tests #290 (4 GiB); H200 259.0 / 272.6 = 0.950 (Spectrum-X RoCE,
// 16 GiB, against Azure ND H200 v5, 8 GiB); their mean, 0.93. A candidate cause, not a derivation:
// on a channel whose tree parent is across the network NVLS_TREE gives 6 scatter and 5 gather warps
// to NVLS's 8 and 7 (src/device/all_reduce.h, v2.19.3), and the network's staging copies run on the
// same SMs. From 4 nodes the network binds first; the cap, which paces every flow of the phase,
// still moves those runs by 1-2 % (4 nodes -2.3 %, 8 nodes +1 %: docs/network-validation.md).
inline constexpr double kNvlsTreeNvlinkShare = 0.93;

// NVLS channels: NVLS_NCHANNELS_SM90 16; Blackwell 24 on one node, 32 across nodes.
inline int nvls_channels(int gpu_arch, int nodes) {
  if (gpu_arch >= 100) return nodes == 1 ? 24 : 32;
  return 16;
}

// treeCorrectionFactor[protocol][log2(bytes / 64)], 64 B .. 256 MiB and above: the tuner's
// derating of a tree's bandwidth by message size (ncclTopoGetAlgoTime).
inline constexpr std::array<std::array<double, 24>, 3> kTreeCorrection{{
    {1.0, 1.0, 1.0, 1.0, .9, .8, .7, .7,  .7,  .7,  .6,  .5,
     .4,  .4,  .5,  .6,  .7, .8, .9, 1.0, 1.0, 1.0, 1.0, 1.0},
    {1.0, 1.0, 1.0, 1.0, 1.0, .9, .8, .8, .8, .7,  .6,  .6,
     .6,  .6,  .6,  .6,  .8,  .9, .9, .9, .9, 1.0, 1.0, 1.0},
    {.9, .9, .9, .9, .9, .9, .9, .8, .7, .6, .6, .5,
     .5, .5, .5, .6, .7, .8, .7, .7, .8, .9, .9, .9},
}};

// ⌊log2 n⌋ (NCCL's log2i), 0 for n <= 1.
inline int log2i(std::size_t n) {
  int r = 0;
  while ((std::size_t{2} << r) <= n)
    ++r;
  return r;
}

inline double tree_correction(Protocol p, double bytes) {
  const auto units = static_cast<std::size_t>(std::max(bytes, 0.0)) >> 6;
  const int i = std::min(log2i(units), 23);
  return kTreeCorrection[static_cast<std::size_t>(p)][static_cast<std::size_t>(i)];
}

// The cost of one chunk step of a pipeline across the network, µs (docs/network.md "Network
// steps"). NCCL's proxy handles every step of every network connection on its own (post the
// buffer, isend / irecv, test, and for Simple with GPUDirect the flush: sendProxyProgress and
// recvProxyProgress in src/transport/net.cc, one action per connection per pass); what that costs
// is host and NIC time NCCL's code does not state, so this figure is fitted: the one global value
// that best reproduces the published multi-node tree rows of validation/collectives
// (docs/network.md says how to refit it). Charged to tree pipelines across nodes (rings across
// nodes take kRingStepPerChannelUs below); NVLSTree's 128 KiB steps are not charged
// (docs/network.md: charging them spoils its 4- and 8-node rows).
inline constexpr double kNetStepUs = 6.0;

// A ring's network step costs this per channel its NIC carries (docs/network.md "The ring's
// steps"): NCCL's proxy serves each connection one action per pass, so the more channels cross one
// NIC, the longer a pass. Fitted like kNetStepUs, with LL and LL128 steps added to the transfer
// (Pipeline::StepFloor::serial): the value of 1.0-2.0 µs with the lowest medians over
// validation/collectives (docs/network.md lists the grid). 3 channels a NIC (the forced-ring
// 24-channel H100 run of nccl-tests #309, LL128 at 1-8 MiB) give 4.5 µs where that run shows
// 4.0-4.6 over its transfer; 2 give 3 µs (A3 Ultra all_gather LL128 at 4-32 MiB: 3.7-4.3); 1 gives
// 1.5 µs (1.4-3.3 published for LL below 64 KiB, where NCCL keeps one channel).
inline constexpr double kRingStepPerChannelUs = 1.5;

// The wire bytes one ring channel's network connection moves per second, GB/s (docs/network.md
// "A channel's network connection"). Fitted to the published multi-node rings at >= 1 GiB with
// NCCL's default 16 channels over 8 × 400 Gb/s NICs, which stop at 20.0-21.5 GB/s a channel
// (320-344 GB/s busbw: GCP A3 Ultra and A4 RoCE all_gather, Voltage Park 4 × 8 H100 InfiniBand
// all_gather and ring all_reduce, nccl-tests #309 8 × 8 H100 default 320.7) while the same
// InfiniBand fabric with 24 channels (NCCL_MIN_CTAS=24, nccl-tests #309, 2 and 8 nodes) reaches
// 391-393, the NICs' line rate: the limit is the channel's, not the NIC's. Those runs also set
// NCCL_IB_QPS_PER_CONNECTION=2, so whether the channel's SMs or its one queue pair set the limit
// those runs cannot say; the p2p channels below, on NVLink alone, stop at the same figure. A cap
// per channel, like NCCL's perChMaxRingLL128 above.
inline constexpr double kNetChannelGBps = 20.6;

// The bytes one p2p channel moves per second, GB/s (docs/network.md "Sends: a channel's rate"): a
// send's parts each run on a channel of their own, and nccl-tests' sendrecv on one node of 8 H100
// (xxrjun cluster01, NCCL 2.29.2) moves 20.5-21.4 GB/s a channel wherever its channels, not its
// NVLinks, bind: 4 channels at 32-64 MiB (79.5-81.8 GB/s), 8 at 128 MiB (162.5), and 8 channels of
// 4 ranks at 32-128 MiB (149-163). That is the ring channels' network figure above, measured
// apart, on NVLink alone: so the limit is the channel's SM, not its queue pair, and the model
// takes the one figure for both.
inline constexpr double kP2pChannelGBps = kNetChannelGBps;

// An LL128 ring's bandwidth as a share of the Simple ring's on the same channels: NCCL's own
// figure, busBw × 0.92 (commented "120.0/128.0", the line's data share, which is 0.9375), capped
// at C × perChMaxRingLL128 (ncclTopoTuneModel, src/graph/tuning.cc, at 5067397c; v2.12-v2.21
// take 0.7 when a node holds one GPU). The model runs LL128 rings at it, as it runs Simple trees
// at NCCL's 0.92 of the ring: the tuner's figure, not a fit.
inline constexpr double kRingLL128Share = 0.92;

// The bytes a ring channel must have for NCCL to keep it (topoGetAlgoInfo, src/enqueue.cc: drop a
// channel while S < channels × threads × threshold): threads LL 512, LL128 640, Simple 512
// (NCCL_LL_MAX_NTHREADS, NCCL_LL128_MAX_NTHREADS, NCCL_SIMPLE_MAX_NTHREADS, src/include/device.h;
// ring Simple takes 256 only where NVLink × channels is under PCIe's 12 GB/s); threshold LL 8 ×
// ranks, LL128 8, Simple 64 bytes a thread (NCCL_*_THREAD_THRESHOLD, src/include/comm.h, the ring's
// LL one times nRanks in src/init.cc). S is the nccl-tests size (ncclFuncMaxSendRecvCount).
inline double ring_bytes_per_channel(Protocol p, double ranks) {
  switch (p) {
    case Protocol::ll:
      return 512.0 * 8.0 * ranks;
    case Protocol::ll128:
      return 640.0 * 8.0;
    case Protocol::simple:
      return 512.0 * 64.0;
  }
  return 0.0;
}

// What NCCL's pipeline depends on (nccl_pipeline.cpp).
struct PipelineShape {
  std::size_t nodes = 1;
  std::size_t ppn = 1;  // members per node
  double channels = 1;  // ring/tree channels
  int gpu_arch = 80;
  std::size_t ranks = 0;       // the ring's n (0: nodes · ppn)
  double ring_loop_steps = 0;  // a ring loop's steps: 2(n−1) all-reduce, n−1 otherwise
  double rails = 1.0;          // the NICs a node's channels cross (a ring's step cost)
  double nvls_channels = 16;   // NVLS channels (NVLS and NVLSTree rows)
};
// The chunked pipeline of algorithm row `row` with protocol `p` (docs/network.md "Pipeline
// fill"); its seconds_per_byte is left for the caller.
Pipeline pipeline_of(Row row, Protocol p, const PipelineShape& s);

}  // namespace clustersim::engine::nccl
