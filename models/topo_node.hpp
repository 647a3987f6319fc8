// From `nvidia-smi topo -m` to the scenario's node description (docs/scenario.md "A node from
// nvidia-smi topo -m"): what `clustersim import-topo` writes and what `cluster: {node: {from_topo:
// FILE}}` reads. The matrix says how GPUs, NICs and CPUs connect; it does not name the GPU model or
// the PCIe generation, and the conversion says so instead of guessing.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "engine/topology_builders.hpp"
#include "models/hardware.hpp"
#include "models/nvidia_smi_topo.hpp"

namespace clustersim::models {

struct TopoNode {
  int gpus = 0;
  engine::IntraNodeFabric fabric = engine::IntraNodeFabric::pcie;
  // nvswitch: each GPU's NVLink bandwidth to the fabric; pcie with bridges: each bridge's. Per
  // direction, as every bandwidth of a scenario.
  std::optional<double> nvlink_bandwidth;  // bytes/s
  bool nvlink_bridges = false;
  std::optional<int> gpus_per_switch;  // 0: GPUs on the CPU's root complex
  std::optional<int> cpus;             // NUMA domains the GPUs sit on
  std::optional<int> nics;  // NICs under some GPU's PCIe switch (capped at gpus unless a multiple)
  // GPU name -> its nearest compute NICs ("NIC0 (mlx5_0)"); the schema has no key for it: the
  // engine gives each GPU its own NIC when there are as many as GPUs (its own group of
  // rails with a multiple), else shares them.
  std::vector<std::pair<std::string, std::vector<std::string>>> nic_affinity;
  std::vector<std::string> inferred;      // "fabric: nvswitch (every GPU pair is NV12)"
  std::vector<std::string> not_inferred;  // "the GPU model: ...; give gpu:"
};

// `gpu`, when known, picks the NVLink generation (per-link bandwidth); without it NVLink 2-4's
// 25 GB/s per link and direction is assumed and said.
TopoNode node_from_topo(const TopoDescription& topo, const GpuSpec* gpu);

// Sets the fields the matrix determined; the others keep their values (defaults or a preset's).
void apply_topo_node(const TopoNode& node, engine::NodeTopologySpec& spec);

// The scenario's `cluster:` block the matrix implies, as YAML (yaml-cpp's emitter), headed by
// comments naming `source` and listing what could not be inferred. `gpu_name` may be empty.
std::string topo_cluster_yaml(const TopoNode& node, const std::string& source,
                              const std::string& gpu_name);

struct TopoImport {
  TopoNode node;
  std::string yaml;  // topo_cluster_yaml
};
// `clustersim import-topo FILE [--gpu NAME]`: reads FILE (TopoParseError "FILE:LINE: ..." when it
// is not a matrix) and converts it. `gpu_name` is empty or a GPU preset's name.
TopoImport import_topo(const std::string& path, const std::string& gpu_name);

}  // namespace clustersim::models
