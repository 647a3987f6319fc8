#include "models/memory_overheads.hpp"

#include <algorithm>
#include <string>

#include "models/units.hpp"

namespace clustersim::models {

namespace {

// The compute capability family a GPU preset belongs to, from its name.
enum class Family { volta, ampere_sm80, ampere_ada, hopper_or_later };

Family family_of(const GpuSpec& gpu) {
  const std::string& n = gpu.name;
  auto has = [&](const char* s) { return n.find(s) != std::string::npos; };
  if (has("H100") || has("H200") || has("H800") || has("H20") || has("B200") || has("B100") ||
      has("GB200") || has("GH200"))
    return Family::hopper_or_later;
  if (has("A100") || has("A800") || has("A30")) return Family::ampere_sm80;
  if (has("V100") || has("P100")) return Family::volta;
  return Family::ampere_ada;  // A10G, A40, L40S, RTX 3090 / 4090, ...
}

// NCCL: per channel and connection one buffer per protocol, Simple 4 MiB + LL 512 KiB + LL128
// 4.6875 MiB (NCCL's DEFAULT_BUFFSIZE, DEFAULT_LL_BUFFSIZE, DEFAULT_LL128_BUFFSIZE).
constexpr double kNcclConnection = (4.0 + 0.5 + 4.6875) * kMiB;
// NVLink SHARP buffers per rank on NVSwitch Hopper+ groups of > 2 GPUs in a node (vLLM #9699:
// nvlsPerRankSize 301989888).
constexpr double kNvlsPerRank = 301989888.0;

// Send/receive (pipeline parallelism) uses no ring or tree channels: "each channel has its own
// buffer for collective operations (ring/tree/etc). For send/recv operations however, we have a
// single shared buffer" (NVIDIA/nccl #1450). Per peer NCCL spreads point-to-point traffic over
// NCCL_NCHANNELS_PER_NET_PEER = 2 channels, each a Simple buffer and an LL buffer in each
// direction.
constexpr int kP2pChannelsPerPeer = 2;
constexpr double kP2pConnection = (4.0 + 0.5) * kMiB;

}  // namespace

// PyTorch's default CUBLAS_WORKSPACE_CONFIG :4096:2:16:8 (8.125 MiB), 32 MiB on Hopper and
// later (PR #89027); cuBLASLt 1 MiB, 4 MiB on sm80 with >= 24 GiB, 32 MiB on Hopper (PR #120925).
// One pair per stream that runs GEMMs: the compute stream.
double cublas_workspaces(const GpuSpec& gpu) {
  switch (family_of(gpu)) {
    case Family::hopper_or_later:
      return 64 * kMiB;
    case Family::ampere_sm80:
      return (8.125 + (gpu.memory_bytes >= 24 * 1024 * kMiB ? 4 : 1)) * kMiB;
    case Family::volta:
    case Family::ampere_ada:
      return 9.125 * kMiB;
  }
  return 0;
}

double nccl_bytes(const Scenario& sc, const std::vector<Communicator>& comms) {
  const auto& node = sc.cluster.topology.node;
  const bool nvswitch = node.fabric == engine::IntraNodeFabric::nvswitch;
  const int channels = nvswitch ? 32 : (node.nvlink_bridges ? 8 : 4);
  const bool nvls = nvswitch && family_of(sc.cluster.gpu) == Family::hopper_or_later;
  double bytes = 0;
  for (const auto& c : comms) {
    if (c.ranks.size() < 2) continue;
    if (c.p2p_only) {
      // A pipeline rank talks to the stage before and the one after (one peer for two stages;
      // the interleaved schedule also links the last stage to the first, so 1F1B's end stages
      // are counted with two peers too): each peer channels × (send + receive) buffers.
      const int peers = c.ranks.size() > 2 ? 2 : 1;
      bytes += peers * kP2pChannelsPerPeer * 2 * kP2pConnection;
      continue;
    }
    bytes += channels * c.connections_per_channel * kNcclConnection;
    const auto node_of = [&](engine::Rank r) { return static_cast<int>(r) / node.gpus; };
    const bool one_node = std::all_of(c.ranks.begin(), c.ranks.end(), [&](engine::Rank r) {
      return node_of(r) == node_of(c.ranks[0]);
    });
    if (nvls && one_node && c.ranks.size() > 2) bytes += kNvlsPerRank;
  }
  return bytes;
}

}  // namespace clustersim::models
