#include "models/topo_node.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <numeric>
#include <set>
#include <stdexcept>

#include "models/units.hpp"

namespace clustersim::models {

namespace {

// The most NVLinks one GPU has (H100, H200, B200: 18). A pair bonded by more links than that
// divided by its peers cannot be a direct mesh: the links go to NVSwitches.
constexpr int kMaxLinksPerGpu = 18;

std::string gbps(double bytes_per_second) {
  char text[32];
  std::snprintf(text, sizeof text, "%gGB/s", bytes_per_second / kGB);
  return text;
}

// One NVLink's bandwidth per direction by generation: NVLink 1 (P100) 20 GB/s; NVLink 2-4 (V100,
// A100, H100, H200) 25 GB/s; NVLink 5 (B200, GB200) 50 GB/s (NVIDIA's NVLink pages: 18 links =
// 900 GB/s on H100, 1.8 TB/s on B200, both directions together).
double nvlink_per_link(const GpuSpec* gpu, TopoNode& out) {
  if (gpu == nullptr) {
    out.not_inferred.push_back(
        "the NVLink generation: 25 GB/s per link and direction assumed (NVLink 2-4: V100, A100, "
        "H100, H200); a B200's NVLink 5 carries 50 (give the GPU: --gpu, or gpu: in the scenario)");
    return 25 * kGB;
  }
  const auto has = [&](const char* s) { return gpu->name.find(s) != std::string::npos; };
  if (has("B200") || has("B100") || has("B300")) return 50 * kGB;
  if (has("P100")) return 20 * kGB;
  return 25 * kGB;
}

int gpu_index(const TopoDescription& t, const std::string& name) {
  for (std::size_t i = 0; i < t.gpus.size(); ++i)
    if (t.gpus[i].name == name) return static_cast<int>(i);
  return -1;
}

bool near(TopoLink l) {
  return l == TopoLink::pix || l == TopoLink::pxb;
}

std::string nic_label(const TopoDescription& t, const std::string& nic) {
  for (const auto& n : t.nics)
    if (n.name == nic && n.nic_device != n.name) return nic + " (" + n.nic_device + ")";
  return nic;
}

void read_nvlink(const TopoDescription& t, const GpuSpec* gpu, TopoNode& out) {
  const int n = out.gpus;
  std::vector<const TopoPair*> nv;
  for (const auto& p : t.gpu_pairs)
    if (p.link == TopoLink::nvlink) nv.push_back(&p);
  if (nv.empty()) {
    out.inferred.push_back("fabric: pcie (no GPU pair is connected by NVLink)");
    return;
  }
  const auto [lo, hi] = std::minmax_element(
      nv.begin(), nv.end(), [](const auto* a, const auto* b) { return a->nvlinks < b->nvlinks; });
  const int links = (*lo)->nvlinks;
  if ((*lo)->nvlinks != (*hi)->nvlinks)
    out.not_inferred.push_back("equal NVLink counts: pairs have NV" + std::to_string(links) +
                               " to NV" + std::to_string((*hi)->nvlinks) + "; the lowest is used");
  const double per_link = nvlink_per_link(gpu, out);
  if (nv.size() == t.gpu_pairs.size()) {
    out.fabric = engine::IntraNodeFabric::nvswitch;
    const bool mesh = n > 2 && links * (n - 1) <= kMaxLinksPerGpu;
    const int per_gpu = mesh ? links * (n - 1) : links;
    out.nvlink_bandwidth = per_gpu * per_link;
    out.inferred.push_back(
        "fabric: nvswitch (every GPU pair is NV" + std::to_string(links) +
        (mesh ? "; " + std::to_string(links) + " links to each of " + std::to_string(n - 1) +
                    " peers fit on one GPU: a direct NVLink mesh, modelled as a switch with the "
                    "GPU's summed bandwidth)"
              : ": NVLink through NVSwitches)"));
    out.inferred.push_back("nvlink_bandwidth: " + gbps(*out.nvlink_bandwidth) +
                           " per GPU and direction (" + std::to_string(per_gpu) + " links x " +
                           gbps(per_link) + ")");
    return;
  }
  out.fabric = engine::IntraNodeFabric::pcie;
  // The schema's bridges join GPUs 0-1, 2-3, ...: only a matrix with exactly those says so.
  std::set<std::pair<int, int>> bridged;
  for (const auto* p : nv) {
    const int a = gpu_index(t, p->a), b = gpu_index(t, p->b);
    bridged.insert({std::min(a, b), std::max(a, b)});
  }
  bool pairs = n % 2 == 0 && static_cast<int>(bridged.size()) == n / 2;
  for (int i = 0; pairs && i < n; i += 2)
    pairs = bridged.contains({i, i + 1});
  std::string list;
  for (const auto* p : nv)
    list += (list.empty() ? "" : ", ") + p->a + "-" + p->b;
  if (pairs) {
    out.nvlink_bridges = true;
    out.nvlink_bandwidth = links * per_link;
    out.inferred.push_back("fabric: pcie with nvlink_bridges (NVLink between " + list + ")");
    out.inferred.push_back("nvlink_bandwidth: " + gbps(*out.nvlink_bandwidth) +
                           " per bridge and direction (" + std::to_string(links) + " links x " +
                           gbps(per_link) + ")");
  } else {
    out.inferred.push_back("fabric: pcie (NVLink joins only some GPU pairs)");
    out.not_inferred.push_back("NVLink between " + list +
                               ": the schema's bridges join every pair 0-1, 2-3, ...; these run "
                               "over PCIe in the simulation");
  }
}

// GPUs under one PCIe switch: PIX/PXB between them, or (on NVLink nodes, whose GPU rows show NV#)
// a NIC that is PIX/PXB to both.
void read_pcie_groups(const TopoDescription& t, TopoNode& out) {
  const int n = out.gpus;
  std::vector<int> parent(static_cast<std::size_t>(n));
  std::iota(parent.begin(), parent.end(), 0);
  const auto root = [&](int i) {
    while (parent[static_cast<std::size_t>(i)] != i)
      i = parent[static_cast<std::size_t>(i)];
    return i;
  };
  const auto join = [&](int a, int b) { parent[static_cast<std::size_t>(root(a))] = root(b); };
  bool pcie_visible = false, any_near = false;
  for (const auto& p : t.gpu_pairs) {
    if (p.link != TopoLink::nvlink) pcie_visible = true;
    if (near(p.link)) {
      join(gpu_index(t, p.a), gpu_index(t, p.b));
      any_near = true;
    }
  }
  std::map<std::string, int> nic_owner;
  for (const auto& p : t.gpu_nic_pairs) {
    if (!near(p.link)) continue;
    any_near = true;
    const bool a_gpu = gpu_index(t, p.a) >= 0;
    const int g = gpu_index(t, a_gpu ? p.a : p.b);
    const std::string& nic = a_gpu ? p.b : p.a;
    if (const auto it = nic_owner.find(nic); it != nic_owner.end())
      join(g, it->second);
    else
      nic_owner[nic] = g;
  }
  if (!any_near) {
    if (pcie_visible) {
      out.gpus_per_switch = 0;
      out.inferred.push_back(
          "gpus_per_switch: 0 (no GPU shares a PCIe switch with another GPU or a NIC: PHB, NODE "
          "or SYS only, so the GPUs sit on the CPU's root complex)");
    } else {
      out.not_inferred.push_back(
          "PCIe switch groups: NVLink hides them in the GPU rows and no NIC shares a switch with "
          "a GPU; intra_node.gpus_per_switch keeps its default");
    }
    return;
  }
  std::map<int, std::vector<int>> groups;
  for (int i = 0; i < n; ++i)
    groups[root(i)].push_back(i);
  const std::size_t size = groups.begin()->second.size();
  bool equal = true, consecutive = true;
  for (const auto& [r, g] : groups) {
    equal = equal && g.size() == size;
    for (std::size_t k = 0; k < g.size(); ++k)
      consecutive =
          consecutive && g[k] == g[0] + static_cast<int>(k) && g[0] % static_cast<int>(size) == 0;
  }
  std::string text;
  for (const auto& [r, g] : groups) {
    text += text.empty() ? "{" : ", {";
    for (std::size_t k = 0; k < g.size(); ++k)
      text += (k ? "," : "") + std::to_string(g[k]);
    text += "}";
  }
  if (!equal) {
    out.not_inferred.push_back("gpus_per_switch: PCIe switch groups of unequal size (GPUs " + text +
                               "); intra_node.gpus_per_switch keeps its default");
    return;
  }
  out.gpus_per_switch = static_cast<int>(size);
  out.inferred.push_back("gpus_per_switch: " + std::to_string(size) + " (PCIe switch groups " +
                         text + ", from PIX/PXB between GPUs and to shared NICs)");
  if (!consecutive)
    out.not_inferred.push_back(
        "the grouping itself: the simulation puts consecutive GPUs under "
        "one switch, the matrix groups " +
        text);
}

void read_cpus(const TopoDescription& t, TopoNode& out) {
  std::set<std::string> numa, cpu;
  for (const auto& g : t.gpus) {
    if (!g.numa_affinity.empty() && g.numa_affinity != "N/A") numa.insert(g.numa_affinity);
    if (!g.cpu_affinity.empty() && g.cpu_affinity != "N/A") cpu.insert(g.cpu_affinity);
  }
  const auto& seen = numa.empty() ? cpu : numa;
  if (!seen.empty()) {
    std::string list;
    for (const auto& s : seen)
      list += (list.empty() ? "" : "; ") + s;
    out.cpus = static_cast<int>(seen.size());
    out.inferred.push_back("cpus: " + std::to_string(seen.size()) + " (the GPUs' " +
                           (numa.empty() ? "CPU" : "NUMA") + " affinity: " + list +
                           "; SYS crosses between them)");
    return;
  }
  const bool sys = std::any_of(t.gpu_pairs.begin(), t.gpu_pairs.end(),
                               [](const TopoPair& p) { return p.link == TopoLink::sys; });
  out.not_inferred.push_back(std::string("cpus: no CPU or NUMA affinity column") +
                             (sys ? "; SYS shows more than one NUMA node, not how many" : "") +
                             "; intra_node.cpus keeps its default");
}

void read_nics(const TopoDescription& t, TopoNode& out) {
  if (t.nics.empty()) {
    out.not_inferred.push_back(
        "NICs: the matrix has no NIC rows; network.nics_per_node keeps its default");
    return;
  }
  std::set<std::string> compute;
  for (const auto& g : t.gpus) {
    std::vector<std::string> mine;
    for (const auto& nic : t.nearest_nics(g.name)) {
      const auto it =
          std::find_if(t.gpu_nic_pairs.begin(), t.gpu_nic_pairs.end(), [&](const TopoPair& p) {
            return (p.a == g.name && p.b == nic) || (p.b == g.name && p.a == nic);
          });
      if (it != t.gpu_nic_pairs.end() && near(it->link)) {
        mine.push_back(nic_label(t, nic));
        compute.insert(nic);
      }
    }
    if (!mine.empty()) out.nic_affinity.emplace_back(g.name, mine);
  }
  std::string others;
  for (const auto& nic : t.nics)
    if (!compute.contains(nic.name))
      others += (others.empty() ? "" : ", ") + nic_label(t, nic.name);
  int count = static_cast<int>(compute.size());
  if (count == 0) {
    count = static_cast<int>(t.nics.size());
    out.inferred.push_back("nics_per_node: " + std::to_string(count) +
                           " (no NIC shares a PCIe switch with a GPU: they hang off the CPUs)");
  } else {
    out.inferred.push_back("nics_per_node: " + std::to_string(count) +
                           " (NICs under a GPU's PCIe switch, PIX/PXB)");
    if (!others.empty())
      out.inferred.push_back("not counted, no GPU's nearest (storage or management): " + others);
  }
  // AWS's EFA devices are named rdmap<bus>s<slot>: NCCL reaches them through aws-ofi-nccl,
  // whose reported latency the matrix cannot show.
  if (std::any_of(t.nics.begin(), t.nics.end(), [&](const auto& n) {
        return compute.contains(n.name) && n.nic_device.starts_with("rdmap");
      }))
    out.not_inferred.push_back(
        "network.plugin_latency: the rdmap* NICs are AWS EFA devices, which NCCL reaches through "
        "aws-ofi-nccl; it reports 75us on p4d, p4de, p5 and p5e and 35us on p5en and later "
        "(the aws-p4de and aws-p5 node presets set it; docs/topology.md \"Several NICs per GPU\")");
  if (count > out.gpus && out.gpus > 0 && count % out.gpus == 0) {
    out.inferred.push_back(std::to_string(count / out.gpus) +
                           " NICs per GPU: each GPU's are its rails, one network device of their "
                           "summed bandwidth (docs/topology.md \"Several NICs per GPU\")");
  } else if (count > out.gpus) {
    out.not_inferred.push_back(std::to_string(count) + " NICs for " + std::to_string(out.gpus) +
                               " GPUs: the schema allows at most one per GPU, or a multiple of "
                               "the GPUs (rails)");
    count = out.gpus;
  }
  out.nics = count;
}

}  // namespace

TopoNode node_from_topo(const TopoDescription& topo, const GpuSpec* gpu) {
  TopoNode out;
  out.gpus = static_cast<int>(topo.gpus.size());
  out.inferred.push_back("gpus_per_node: " + std::to_string(out.gpus) + " (GPU rows)");
  read_nvlink(topo, gpu, out);
  read_pcie_groups(topo, out);
  read_cpus(topo, out);
  read_nics(topo, out);
  if (gpu == nullptr)
    out.not_inferred.push_back(
        "the GPU model: topo -m does not print it; give gpu: (clustersim presets gpus)");
  out.not_inferred.push_back(
      "the PCIe generation and bandwidth: not in topo -m (nvidia-smi -q shows 'Link Gen'); "
      "intra_node.pcie_gen keeps its default");
  out.not_inferred.push_back(
      "NIC bandwidth and the fabric between nodes: not in topo -m (ibstat shows the rate); give "
      "network.nic_bandwidth and the node count");
  return out;
}

void apply_topo_node(const TopoNode& node, engine::NodeTopologySpec& spec) {
  spec.gpus = node.gpus;
  spec.fabric = node.fabric;
  if (node.nvlink_bandwidth)
    spec.nvlink_bandwidth = engine::Bandwidth::bytes_per_second(*node.nvlink_bandwidth);
  spec.nvlink_bridges = node.nvlink_bridges;
  if (node.gpus_per_switch) spec.gpus_per_pcie_switch = *node.gpus_per_switch;
  if (node.cpus) spec.cpus = *node.cpus;
  if (node.nics) spec.nics = *node.nics;
}

std::string topo_cluster_yaml(const TopoNode& node, const std::string& source,
                              const std::string& gpu_name) {
  YAML::Emitter out;
  std::string head = "The node `nvidia-smi topo -m` in " + source + " describes";
  head += " (clustersim import-topo).";
  if (!node.nic_affinity.empty()) {
    head +=
        "\nNearest NICs per GPU (the simulation gives each GPU its own NIC when there are as "
        "many NICs as GPUs, and its own group of rails when there are a multiple):";
    for (const auto& [g, nics] : node.nic_affinity) {
      std::string line = "  " + g + ":";
      for (const auto& n : nics)
        line += " " + n;
      head += "\n" + line;
    }
  }
  head += "\nNot in the matrix:";
  for (const auto& n : node.not_inferred)
    head += "\n  - " + n;
  out << YAML::Comment(head) << YAML::Newline;
  out << YAML::BeginMap << YAML::Key << "cluster" << YAML::Value << YAML::BeginMap;
  if (!gpu_name.empty()) out << YAML::Key << "gpu" << YAML::Value << gpu_name;
  out << YAML::Key << "gpus_per_node" << YAML::Value << node.gpus;
  out << YAML::Key << "intra_node" << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "fabric" << YAML::Value
      << (node.fabric == engine::IntraNodeFabric::nvswitch ? "nvswitch" : "pcie");
  if (node.nvlink_bandwidth)
    out << YAML::Key << "nvlink_bandwidth" << YAML::Value << gbps(*node.nvlink_bandwidth);
  if (node.nvlink_bridges) out << YAML::Key << "nvlink_bridges" << YAML::Value << true;
  if (node.gpus_per_switch)
    out << YAML::Key << "gpus_per_switch" << YAML::Value << *node.gpus_per_switch;
  if (node.cpus) out << YAML::Key << "cpus" << YAML::Value << *node.cpus;
  out << YAML::EndMap;
  if (node.nics)
    out << YAML::Key << "network" << YAML::Value << YAML::BeginMap << YAML::Key << "nics_per_node"
        << YAML::Value << *node.nics << YAML::EndMap;
  out << YAML::EndMap << YAML::EndMap;
  return std::string(out.c_str()) + "\n";
}

TopoImport import_topo(const std::string& path, const std::string& gpu_name) {
  const GpuSpec* gpu = gpu_name.empty() ? nullptr : find_gpu(gpu_name);
  if (!gpu_name.empty() && gpu == nullptr)
    throw std::invalid_argument("unknown GPU preset '" + gpu_name + "' (clustersim presets gpus)");
  TopoImport out;
  out.node = node_from_topo(read_nvidia_smi_topo(path), gpu);
  out.yaml = topo_cluster_yaml(out.node, path, gpu_name);
  return out;
}

}  // namespace clustersim::models
