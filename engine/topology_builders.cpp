// Builds the cluster graph of topology_builders.hpp. The decisions behind it (NIC placement,
// aggregated spine trunks, no GPU forwarding) are explained in docs/topology.md.
#include "engine/topology_builders.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

namespace clustersim::engine {

namespace {

[[noreturn]] void reject(const std::string& field, const std::string& what) {
  throw std::invalid_argument("cluster topology: " + field + " " + what);
}

void require_count(const std::string& field, int value, int minimum) {
  if (value < minimum)
    reject(field, "= " + std::to_string(value) +
                      " (allowed: an integer >= " + std::to_string(minimum) + ")");
}

void require_bandwidth(const std::string& field, Bandwidth bw) {
  const double v = bw.bytes_per_second();
  if (!(v > 0.0) || !std::isfinite(v))
    reject(field, "= " + std::to_string(v) + " B/s (allowed: a finite bandwidth > 0)");
}

void require_latency(const std::string& field, Time t) {
  if (t < Time::zero())
    reject(field, "= " + std::to_string(t.ps()) + " ps (allowed: a latency >= 0)");
}

void validate_node(const NodeTopologySpec& n, int nodes) {
  require_count("node.gpus", n.gpus, 1);
  require_count("node.cpus", n.cpus, 1);
  require_count("node.gpus_per_pcie_switch", n.gpus_per_pcie_switch, 0);
  if (n.gpus_per_pcie_switch > 0 && n.gpus % n.gpus_per_pcie_switch != 0)
    reject("node.gpus_per_pcie_switch",
           "= " + std::to_string(n.gpus_per_pcie_switch) + " does not divide node.gpus = " +
               std::to_string(n.gpus) + " (allowed: 0, or a divisor of node.gpus)");
  require_bandwidth("node.pcie_bandwidth", n.pcie_bandwidth);
  require_latency("node.pcie_latency", n.pcie_latency);
  if (n.cpus > 1) {
    require_bandwidth("node.cpu_interconnect_bandwidth", n.cpu_interconnect_bandwidth);
    require_latency("node.cpu_interconnect_latency", n.cpu_interconnect_latency);
  }
  const bool uses_nvlink = n.fabric == IntraNodeFabric::nvswitch || n.nvlink_bridges;
  if (uses_nvlink) {
    require_bandwidth("node.nvlink_bandwidth", n.nvlink_bandwidth);
    require_latency("node.nvlink_latency", n.nvlink_latency);
  }
  if (n.fabric == IntraNodeFabric::nvswitch && n.nvlink_bridges)
    reject("node.nvlink_bridges", "is only for a pcie node (allowed: false with nvswitch)");
  if (n.nvlink_bridges && n.gpus % 2 != 0)
    reject("node.nvlink_bridges", "pairs GPUs 0-1, 2-3, ... but node.gpus = " +
                                      std::to_string(n.gpus) + " is odd (allowed: an even count)");
  if (n.nics < 0 || (n.nics > n.gpus && n.nics % n.gpus != 0))
    reject("node.nics", "= " + std::to_string(n.nics) + " (allowed: 0 to node.gpus = " +
                            std::to_string(n.gpus) + ", or a multiple of it: rails per GPU)");
  if (n.nics == 0 && nodes > 1)
    reject("node.nics", "= 0 but nodes = " + std::to_string(nodes) +
                            " (allowed: at least 1 NIC per node when there is more than one node)");
  if (n.nics > 0) require_bandwidth("node.nic_bandwidth", n.nic_bandwidth);
}

void validate_fabric(const FabricSpec& f) {
  require_latency("fabric.latency", f.latency);
  if (!(f.oversubscription >= 1.0) || !std::isfinite(f.oversubscription))
    reject("fabric.oversubscription",
           "= " + std::to_string(f.oversubscription) + " (allowed: a finite ratio >= 1)");
  if (f.kind == FabricKind::fat_tree) require_count("fabric.nics_per_leaf", f.nics_per_leaf, 1);
  if (f.kind != FabricKind::single_switch) require_count("fabric.spines", f.spines, 1);
  require_count("fabric.leaves_per_pod", f.leaves_per_pod, 0);
  if (f.leaves_per_pod == 0) {
    // Without pods the pod keys mean nothing: a stated value is a mistake, not a default.
    if (f.pod_oversubscription != 1.0)
      reject("fabric.pod_oversubscription",
             "= " + std::to_string(f.pod_oversubscription) +
                 " without pods (allowed: 1 unless fabric.leaves_per_pod >= 1)");
    if (f.cores != 1)
      reject("fabric.cores", "= " + std::to_string(f.cores) +
                                 " without pods (allowed: 1 unless fabric.leaves_per_pod >= 1)");
    return;
  }
  if (f.kind != FabricKind::fat_tree)
    reject("fabric.leaves_per_pod",
           "= " + std::to_string(f.leaves_per_pod) +
               " on a fabric that is not a fat tree (allowed: 0, or pods of a fat tree)");
  if (!(f.pod_oversubscription >= 1.0) || !std::isfinite(f.pod_oversubscription))
    reject("fabric.pod_oversubscription",
           "= " + std::to_string(f.pod_oversubscription) + " (allowed: a finite ratio >= 1)");
  require_count("fabric.cores", f.cores, 1);
}

// Item i of `count` spread in contiguous blocks over `holders`: ⌊i·holders/count⌋.
int spread(int i, int count, int holders) {
  return static_cast<int>(static_cast<long long>(i) * holders / count);
}

// One node's vertices and links; returns the node's NIC vertices (local index order).
std::vector<VertexId> build_node(Topology& topo, const NodeTopologySpec& n, int node) {
  const std::string prefix = "n" + std::to_string(node) + ".";
  std::vector<VertexId> gpu(static_cast<std::size_t>(n.gpus));
  for (int i = 0; i < n.gpus; ++i)
    gpu[i] = topo.gpu_vertex(topo.add_gpu(prefix + "gpu" + std::to_string(i), node));

  if (n.fabric == IntraNodeFabric::nvswitch) {
    // The NVSwitch fabric as one vertex: every GPU pair is GPU -> nvswitch -> GPU.
    const VertexId nvswitch = topo.add_vertex(VertexKind::nvswitch, prefix + "nvswitch", node);
    for (VertexId g : gpu)
      topo.add_link(g, nvswitch, n.nvlink_bandwidth, n.nvlink_latency, LinkKind::nvlink);
  } else if (n.nvlink_bridges) {
    for (int i = 0; i + 1 < n.gpus; i += 2)
      topo.add_link(gpu[i], gpu[i + 1], n.nvlink_bandwidth, n.nvlink_latency, LinkKind::nvlink);
  }

  std::vector<VertexId> cpu(static_cast<std::size_t>(n.cpus));
  for (int c = 0; c < n.cpus; ++c)
    cpu[c] = topo.add_vertex(VertexKind::cpu, prefix + "cpu" + std::to_string(c), node);
  for (int c = 0; c < n.cpus; ++c)
    for (int d = c + 1; d < n.cpus; ++d)
      topo.add_link(cpu[c], cpu[d], n.cpu_interconnect_bandwidth, n.cpu_interconnect_latency,
                    LinkKind::cpu_interconnect);

  // PCIe tree: GPUs under switches under CPUs, or GPUs straight on the CPUs' root complexes.
  // `holders` are the vertices NICs may hang off when GPUs do not have their own.
  std::vector<VertexId> holders;
  if (n.gpus_per_pcie_switch > 0) {
    const int switches = n.gpus / n.gpus_per_pcie_switch;
    for (int s = 0; s < switches; ++s) {
      const VertexId sw =
          topo.add_vertex(VertexKind::pcie_switch, prefix + "pcie" + std::to_string(s), node);
      topo.add_link(sw, cpu[spread(s, switches, n.cpus)], n.pcie_bandwidth, n.pcie_latency,
                    LinkKind::pcie);
      holders.push_back(sw);
    }
    for (int i = 0; i < n.gpus; ++i)
      topo.add_link(gpu[i], holders[i / n.gpus_per_pcie_switch], n.pcie_bandwidth, n.pcie_latency,
                    LinkKind::pcie);
  } else {
    holders = cpu;
    for (int i = 0; i < n.gpus; ++i)
      topo.add_link(gpu[i], cpu[spread(i, n.gpus, n.cpus)], n.pcie_bandwidth, n.pcie_latency,
                    LinkKind::pcie);
  }

  const int devices = nic_devices(n);
  std::vector<VertexId> nic(static_cast<std::size_t>(devices));
  for (int j = 0; j < devices; ++j) {
    nic[j] = topo.add_vertex(VertexKind::nic, prefix + "nic" + std::to_string(j), node);
    // One NIC (or one group of rails) per GPU: GPUDirect RDMA through the GPU's PCIe switch,
    // modelled as a direct link so GPU j always uses NIC j (rail j). Fewer NICs: shared, on the
    // PCIe switches or CPUs.
    const VertexId attach =
        devices == n.gpus ? gpu[j] : holders[spread(j, devices, static_cast<int>(holders.size()))];
    topo.add_link(attach, nic[j], n.pcie_bandwidth, n.pcie_latency, LinkKind::pcie);
  }
  return nic;
}

// Uplinks of every leaf to every one of `spines` (named `prefix`spine<s>); a leaf's trunk to each
// spine carries (its NICs × NIC bandwidth) / oversubscription / spines. Returns the spines.
std::vector<VertexId> add_spines(Topology& topo, const FabricSpec& f,
                                 const std::vector<VertexId>& leaves,
                                 const std::vector<int>& nics_on_leaf, Bandwidth nic_bw,
                                 const std::string& prefix = "") {
  std::vector<VertexId> spine(static_cast<std::size_t>(f.spines));
  for (int s = 0; s < f.spines; ++s)
    spine[s] = topo.add_vertex(VertexKind::spine_switch, prefix + "spine" + std::to_string(s), -1);
  for (std::size_t l = 0; l < leaves.size(); ++l) {
    const Bandwidth trunk = nic_bw * nics_on_leaf[l] / f.oversubscription / f.spines;
    for (VertexId s : spine)
      topo.add_link(leaves[l], s, trunk, f.latency, f.link_kind);
  }
  return spine;
}

// A fat tree of three levels: consecutive leaves in pods of leaves_per_pod (the last may be
// partial), each pod its own spines (pod<p>.spine<s>), every pod spine cabled to every core
// (core<c>). A pod spine's downlinks carry its pod's NICs × NIC bandwidth / oversubscription /
// spines; its uplinks sum to that / pod_oversubscription, split evenly over the cores.
void add_pods(Topology& topo, const FabricSpec& f, const std::vector<VertexId>& leaves,
              const std::vector<int>& nics_on_leaf, Bandwidth nic_bw) {
  std::vector<VertexId> core(static_cast<std::size_t>(f.cores));
  for (int c = 0; c < f.cores; ++c)
    core[c] = topo.add_vertex(VertexKind::core_switch, "core" + std::to_string(c), -1);
  const std::size_t per_pod = static_cast<std::size_t>(f.leaves_per_pod);
  for (std::size_t first = 0, pod = 0; first < leaves.size(); first += per_pod, ++pod) {
    const std::size_t last = std::min(leaves.size(), first + per_pod);
    const std::vector<VertexId> pod_leaves(leaves.begin() + first, leaves.begin() + last);
    const std::vector<int> pod_nics(nics_on_leaf.begin() + first, nics_on_leaf.begin() + last);
    int nics = 0;
    for (int n : pod_nics)
      nics += n;
    const Bandwidth trunk =
        nic_bw * nics / f.oversubscription / f.spines / f.pod_oversubscription / f.cores;
    for (VertexId s :
         add_spines(topo, f, pod_leaves, pod_nics, nic_bw, "pod" + std::to_string(pod) + "."))
      for (VertexId c : core)
        topo.add_link(s, c, trunk, f.latency, f.link_kind);
  }
}

// nic[node][j]: NIC device j of `node`. A device of k rails is one cable of k × the interface
// bandwidth and takes k ports (nics_per_leaf and the trunks count interfaces).
void build_fabric(Topology& topo, const ClusterTopologySpec& spec,
                  const std::vector<std::vector<VertexId>>& nic) {
  const FabricSpec& f = spec.fabric;
  const Bandwidth nic_bw = spec.node.nic_bandwidth;
  const int rails = rails_per_nic_device(spec.node);
  const Bandwidth device_bw = nic_bw * rails;
  const int per_node = nic_devices(spec.node);
  switch (f.kind) {
    case FabricKind::single_switch: {
      const VertexId sw = topo.add_vertex(VertexKind::leaf_switch, "switch", -1);
      for (const auto& node_nics : nic)
        for (VertexId v : node_nics)
          topo.add_link(v, sw, device_bw, f.latency, f.link_kind);
      return;
    }
    case FabricKind::fat_tree: {
      // NIC ports numbered node-major fill leaves consecutively; the last leaf may be partial. A
      // device of several rails keeps them on one leaf: a leaf holds the whole devices that fit.
      const int per_leaf = nic_devices_per_leaf(spec.node, f);
      if (per_leaf < 1)
        reject("fabric.nics_per_leaf", "= " + std::to_string(f.nics_per_leaf) +
                                           " is fewer than a GPU's " + std::to_string(rails) +
                                           " rails (allowed: at least " + std::to_string(rails) +
                                           ")");
      const int devices = spec.nodes * per_node;
      const int leaves = (devices + per_leaf - 1) / per_leaf;
      std::vector<VertexId> leaf(static_cast<std::size_t>(leaves));
      std::vector<int> count(static_cast<std::size_t>(leaves), 0);
      for (int l = 0; l < leaves; ++l)
        leaf[l] = topo.add_vertex(VertexKind::leaf_switch, "leaf" + std::to_string(l), -1);
      for (int d = 0; d < devices; ++d) {
        const int l = d / per_leaf;
        topo.add_link(nic[d / per_node][d % per_node], leaf[l], device_bw, f.latency, f.link_kind);
        count[l] += rails;
      }
      if (f.leaves_per_pod > 0)
        add_pods(topo, f, leaf, count, nic_bw);
      else
        add_spines(topo, f, leaf, count, nic_bw);
      return;
    }
    case FabricKind::rail_optimized: {
      // Rail i joins NIC i of every node; rails meet only at the spines.
      std::vector<VertexId> rail(static_cast<std::size_t>(per_node));
      for (int r = 0; r < per_node; ++r) {
        rail[r] = topo.add_vertex(VertexKind::leaf_switch, "rail" + std::to_string(r), -1);
        for (int node = 0; node < spec.nodes; ++node)
          topo.add_link(nic[node][r], rail[r], device_bw, f.latency, f.link_kind);
      }
      add_spines(topo, f, rail, std::vector<int>(rail.size(), spec.nodes * rails), nic_bw);
      return;
    }
  }
  reject("fabric.kind", "is unknown (allowed: single_switch, fat_tree, rail_optimized)");
}

}  // namespace

int nic_devices(const NodeTopologySpec& n) {
  return n.nics > n.gpus ? n.gpus : n.nics;
}

int rails_per_nic_device(const NodeTopologySpec& n) {
  return n.nics > n.gpus && n.gpus > 0 ? n.nics / n.gpus : 1;
}

int nic_devices_per_leaf(const NodeTopologySpec& n, const FabricSpec& f) {
  return f.nics_per_leaf / rails_per_nic_device(n);
}

Topology build_cluster_topology(const ClusterTopologySpec& spec) {
  require_count("nodes", spec.nodes, 1);
  validate_node(spec.node, spec.nodes);
  if (spec.nodes > 1) validate_fabric(spec.fabric);

  Topology topo;
  std::vector<std::vector<VertexId>> nic;
  nic.reserve(static_cast<std::size_t>(spec.nodes));
  for (int node = 0; node < spec.nodes; ++node)
    nic.push_back(build_node(topo, spec.node, node));
  if (spec.nodes > 1) build_fabric(topo, spec, nic);
  if (spec.channels < 0)
    reject("channels",
           "= " + std::to_string(spec.channels) + " (allowed: 0 for automatic, or a count >= 1)");
  CollectiveHardware hw;
  hw.gpu_arch = spec.node.gpu_arch;
  hw.nvls = spec.node.nvls && spec.node.fabric == IntraNodeFabric::nvswitch;
  hw.sharp = spec.fabric.sharp && spec.nodes > 1;
  hw.amd_cpu = spec.node.amd_cpu;
  require_latency("node.nic_plugin_latency", spec.node.nic_plugin_latency);
  hw.nic_latency_us = spec.node.nic_plugin_latency.seconds() * 1e6;
  hw.channels = spec.channels;
  if (spec.min_ctas < 0)
    reject("min_ctas",
           "= " + std::to_string(spec.min_ctas) + " (allowed: 0 for none, or a count >= 1)");
  hw.min_ctas = spec.min_ctas;
  topo.set_collective_hardware(hw);
  return topo;
}

}  // namespace clustersim::engine
