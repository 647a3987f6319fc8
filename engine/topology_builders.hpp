// Builders for the topologies of DESIGN.md: an NVSwitch node (DGX/HGX), a PCIe node (GPUs under
// PCIe switches, traffic between switches through the CPU, optional NVLink bridges between pairs),
// and the fabric between nodes: one switch, a fat tree of two levels (leaves, spines) or three
// (leaves and spines in pods, pods joined by core switches), each level with its oversubscription
// ratio, or rail-optimized. GPUs are numbered node-major: endpoint = node × gpus_per_node + local
// index.
#pragma once

#include "engine/topology.hpp"
#include "engine/units.hpp"

namespace clustersim::engine {

enum class IntraNodeFabric { nvswitch, pcie };

struct NodeTopologySpec {
  IntraNodeFabric fabric = IntraNodeFabric::nvswitch;
  int gpus = 8;
  // nvswitch: each GPU's NVLink bandwidth to the switch fabric. pcie: each NVLink bridge's.
  Bandwidth nvlink_bandwidth = Bandwidth::gigabytes_per_second(300);
  Time nvlink_latency = Time::from_ps(500'000);  // per link (GPU->switch or bridge)
  bool nvlink_bridges = false;  // pcie only: bridges between GPU pairs (0-1, 2-3, ...)
  Bandwidth pcie_bandwidth = Bandwidth::gigabytes_per_second(25);  // per link, per direction
  Time pcie_latency = Time::from_ps(500'000);
  int gpus_per_pcie_switch = 2;  // 0: GPUs sit directly on the CPU's root complex
  int cpus = 2;
  Bandwidth cpu_interconnect_bandwidth = Bandwidth::gigabytes_per_second(40);  // UPI/xGMI
  Time cpu_interconnect_latency = Time::from_ps(200'000);
  // NICs: with one NIC per GPU each GPU has its own (GPUDirect RDMA through its PCIe switch);
  // with fewer, NICs hang off the PCIe switches (or the CPUs) and GPUs share them; with a
  // multiple of the GPUs (AWS p5: 32 EFA interfaces for 8 GPUs), each GPU's nics / gpus
  // interfaces are its rails, one network device of their summed bandwidth (nic_devices()).
  int nics = 8;
  Bandwidth nic_bandwidth = Bandwidth::gigabits_per_second(200);  // per interface
  // The latency the NCCL network plugin reports for a NIC device (ncclNetProperties_t latency,
  // NCCL's latencyInter): 0 for NCCL's own InfiniBand/RoCE transport; AWS's aws-ofi-nccl reports
  // 75 µs on p4d/p5/p5e and 35 µs on p5en and later (src/platform-aws.cpp). NCCL adds it to
  // every network step of its latency model (twice for Simple): CollectiveHardware.
  Time nic_plugin_latency = Time::zero();
  // For the collective tuner (CollectiveHardware): the GPU generation as compute capability × 10,
  // and whether the NVSwitch reduces in the switch (NVLS: NVSwitch gen 3+, H100/H200/B200).
  int gpu_arch = 80;
  bool nvls = false;
  bool amd_cpu = false;  // AMD host CPUs (NCCL's tuner reads the CPU vendor: CollectiveHardware)
};

// The network devices NCCL sees on a node: the NICs, except that with k NICs per GPU (nics a
// multiple of gpus, k >= 2) each GPU's k form one device, as AWS's aws-ofi-nccl plugin groups
// them (its RDMA protocol's multi-rail "leader NIC", which stripes messages over the group and
// reports the group's summed speed to NCCL: aws/aws-ofi-nccl pull requests 205 and 532).
int nic_devices(const NodeTopologySpec& n);
// The interfaces one device stands for: nics / gpus with several a GPU, else 1.
int rails_per_nic_device(const NodeTopologySpec& n);

enum class FabricKind { single_switch, fat_tree, rail_optimized };

struct FabricSpec {
  FabricKind kind = FabricKind::fat_tree;
  Time latency = Time::from_ps(1'000'000);  // per fabric link (NIC->leaf, leaf->spine)
  LinkKind link_kind = LinkKind::ib;
  double oversubscription = 1.0;  // fat tree: leaf downlink capacity / uplink capacity
  int nics_per_leaf = 32;         // fat tree: NIC ports under one leaf switch
  int spines = 1;  // fat tree / rail: spine switches (ECMP picks among them), per pod
  // Fat tree of three levels: consecutive leaves form pods of `leaves_per_pod` (0: no pods, two
  // levels), each pod with its own `spines`; every pod spine is cabled to every one of `cores`
  // core switches, its uplinks summing to its downlinks / pod_oversubscription (Meta's Llama 3
  // cluster: 1:7 at the layer between pods, docs/topology.md).
  int leaves_per_pod = 0;
  double pod_oversubscription = 1.0;
  int cores = 1;
  bool sharp = false;  // switches reduce in the network (SHARP): enables CollNet all-reduce
};

// The NIC devices one fat-tree leaf holds: the whole devices whose rails fit in its
// nics_per_leaf ports (a GPU's rails share a leaf); 0 when not even one fits.
int nic_devices_per_leaf(const NodeTopologySpec& n, const FabricSpec& f);

struct ClusterTopologySpec {
  int nodes = 1;
  NodeTopologySpec node;
  FabricSpec fabric;  // ignored for a single node
  int channels = 0;   // simulation.nccl.channels: collective channels; 0 = NCCL's rule
  int min_ctas = 0;   // simulation.nccl.min_ctas (NCCL_MIN_CTAS): at least this many, NVLS too
};

// Throws std::invalid_argument on impossible specs (naming the field).
Topology build_cluster_topology(const ClusterTopologySpec& spec);

}  // namespace clustersim::engine
