// Parser for `nvidia-smi topo -m` (the GPU/NIC connection matrix): which GPU pairs talk over
// NVLink and which over PCIe, which NIC sits near which GPU, CPU/NUMA affinity. Used to describe a
// calibrated node (the scenario's intra_node fabric) and to warn about PCIe-only GPU pairs.
#pragma once

#include <istream>
#include <stdexcept>
#include <string>
#include <vector>

namespace clustersim::models {

class TopoParseError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// nvidia-smi's connection kinds, nearest first.
enum class TopoLink { nvlink, pix, pxb, phb, node, sys };
std::string_view to_string(TopoLink);

struct TopoPair {
  std::string a, b;  // device names as printed: GPU0, NIC1
  TopoLink link = TopoLink::sys;
  int nvlinks = 0;  // bonded NVLinks for nvlink (NV12 -> 12)
};

struct TopoDevice {
  std::string name;          // GPU3, NIC0
  std::string nic_device;    // NICs: the legend's name (mlx5_0); empty for GPUs
  std::string cpu_affinity;  // "0-63", empty when not printed
  std::string numa_affinity;
};

struct TopoDescription {
  std::vector<TopoDevice> gpus;
  std::vector<TopoDevice> nics;
  std::vector<TopoPair> gpu_pairs;  // each unordered pair once, (i < j) in matrix order
  std::vector<TopoPair> gpu_nic_pairs;

  // "nvswitch" when every GPU pair is NV#, "pcie" otherwise (DESIGN.md intra_node fabric).
  std::string recommended_fabric() const;
  // GPU pairs without NVLink: their traffic crosses PCIe (and maybe the CPU).
  std::vector<TopoPair> pcie_only_pairs() const;
  // The NICs nearest GPU `gpu` (smallest connection kind), in matrix order.
  std::vector<std::string> nearest_nics(const std::string& gpu) const;
};

// `name` labels errors: "<name>:<line>: ...".
TopoDescription parse_nvidia_smi_topo(std::istream& in, const std::string& name);
TopoDescription read_nvidia_smi_topo(const std::string& path);

}  // namespace clustersim::models
