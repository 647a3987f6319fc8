// The `cluster` section: a node preset and/or an explicit GPU, intra-node fabric and network.
// Explicit keys override the preset's fields one by one.
#include <cmath>

#include "models/scenario_detail.hpp"
#include "models/topo_node.hpp"

namespace clustersim::models::detail {
namespace {

constexpr double kTera = 1e12;

GpuSpec gpu_preset(const yaml::Value& v) {
  const std::string name = v.text();
  const GpuSpec* gpu = find_gpu(name);
  if (gpu == nullptr) v.fail_choice(name, gpu_names(), "GPU preset");
  return *gpu;
}

// `gpu: NAME` or `gpu: {preset: NAME, peak_tflops: {bf16: 312}, hbm_bandwidth: 2TB/s, ...}`.
// `base` is the node preset's GPU, if any; a map without any base must give every figure.
GpuSpec read_gpu(const yaml::Value& v, const GpuSpec* base) {
  if (!v.is_map()) return gpu_preset(v);
  yaml::MapReader m = v.map();
  std::optional<GpuSpec> gpu;
  if (auto p = m.get("preset")) gpu = gpu_preset(*p);
  if (!gpu && base != nullptr) gpu = *base;
  const bool complete = gpu.has_value();
  if (!gpu) gpu = GpuSpec{.name = "custom"};
  if (auto x = m.get("name")) gpu->name = x->text();
  // A stated table replaces the preset's whole table: precisions not listed are unsupported.
  auto peak = complete ? m.get("peak_tflops")
                       : std::optional(m.require("peak_tflops",
                                                 "dense peak TFLOP/s per precision, "
                                                 "e.g. {bf16: 312, fp32: 19.5}"));
  if (peak) {
    yaml::MapReader table = peak->map();
    gpu->peak_flops.fill(0.0);
    for (int i = 0; i < kNumPrecisions; ++i) {
      const auto p = static_cast<Precision>(i);
      if (auto x = table.get(to_string(p)))
        gpu->peak_flops[static_cast<std::size_t>(i)] = x->number(0.0) * kTera;
    }
    table.finish();
  }
  auto hbm =
      complete ? m.get("hbm_bandwidth") : m.require("hbm_bandwidth", "a bandwidth, e.g. 2TB/s");
  if (hbm) gpu->hbm_bandwidth = hbm->bandwidth().bytes_per_second();
  auto memory = complete ? m.get("memory") : m.require("memory", "a size, e.g. 80GB");
  if (memory) gpu->memory_bytes = memory->size();
  if (auto x = m.get("compute_efficiency")) gpu->compute_efficiency = x->number(1e-6, 1.0);
  if (auto x = m.get("memory_efficiency")) gpu->memory_efficiency = x->number(1e-6, 1.0);
  if (auto x = m.get("launch_overhead")) gpu->launch_overhead_s = x->time().seconds();
  if (auto x = m.get("sustained_compute")) gpu->sustained_compute_fraction = x->number(1e-6, 1.0);
  m.finish();
  if (gpu->hbm_bandwidth <= 0.0) v.fail("hbm_bandwidth must be positive");
  if (gpu->memory_bytes <= 0.0) v.fail("memory must be positive");
  return *gpu;
}

// PCIe x16 per direction, effective (what cudaMemcpy and nccl-tests reach): Gen4 is 31.5 GB/s
// after 128b/130b encoding and ~25 GB/s after TLP/DLLP overhead; each generation doubles. The
// same figures as the node presets (docs/presets.md).
engine::Bandwidth pcie_x16(int gen) {
  return engine::Bandwidth::gigabytes_per_second(25.0 * std::pow(2.0, gen - 4));
}

engine::Bandwidth positive_bandwidth(const yaml::Value& v) {
  const engine::Bandwidth bw = v.bandwidth();
  if (bw.bytes_per_second() <= 0.0) v.fail("a bandwidth must be positive");
  return bw;
}

// NCCL's architecture class of a GPU (compute capability × 10) from its name: it selects the
// tuner's per-architecture tables and whether an NVSwitch node can run NVLS (Hopper and later).
int gpu_arch_of(const std::string& name) {
  const auto has = [&](const char* s) { return name.find(s) != std::string::npos; };
  if (has("B200") || has("B100") || has("GB200") || has("B300")) return 100;
  if (has("H100") || has("H200") || has("H800") || has("H20")) return 90;
  if (has("V100")) return 70;
  return 80;
}

// Returns whether gpus_per_switch was stated.
bool read_intra_node(const yaml::Value& v, engine::NodeTopologySpec& node) {
  yaml::MapReader m = v.map();
  if (auto x = m.get("fabric"))
    node.fabric = x->choice<engine::IntraNodeFabric>(
        {{"nvswitch", engine::IntraNodeFabric::nvswitch}, {"pcie", engine::IntraNodeFabric::pcie}});
  if (auto x = m.get("nvlink_bandwidth")) node.nvlink_bandwidth = positive_bandwidth(*x);
  if (auto x = m.get("nvlink_latency")) node.nvlink_latency = x->time();
  auto gen = m.get("pcie_gen");
  auto pcie_bw = m.get("pcie_bandwidth");
  if (gen && pcie_bw) pcie_bw->fail("give pcie_gen or pcie_bandwidth, not both");
  if (gen) node.pcie_bandwidth = pcie_x16(gen->count(3, 5));
  if (pcie_bw) node.pcie_bandwidth = positive_bandwidth(*pcie_bw);
  if (auto x = m.get("pcie_latency")) node.pcie_latency = x->time();
  auto per_switch = m.get("gpus_per_switch");
  if (per_switch) node.gpus_per_pcie_switch = per_switch->count(0, limits::kGpusPerNode);
  auto bridges = m.get("nvlink_bridges");
  if (bridges) node.nvlink_bridges = bridges->boolean();
  if (auto x = m.get("cpus")) node.cpus = x->count(1, limits::kCpus);
  if (auto x = m.get("cpu_interconnect_bandwidth"))
    node.cpu_interconnect_bandwidth = positive_bandwidth(*x);
  // NCCL's tuner reads the host CPU's vendor across nodes (engine CollectiveHardware::amd_cpu).
  if (auto x = m.get("cpu_vendor"))
    node.amd_cpu = x->choice<bool>({{"amd", true}, {"intel", false}, {"other", false}});
  m.finish();
  if (node.nvlink_bridges && node.fabric != engine::IntraNodeFabric::pcie)
    bridges->fail(
        "NVLink bridges exist only between GPU pairs of a PCIe node; allowed: "
        "nvlink_bridges: true with fabric: pcie");
  return per_switch.has_value();
}

// The keys checked once the node is known, when stated.
struct NetworkKeys {
  std::optional<yaml::Value> nics_per_node;
  std::optional<yaml::Value> nics_per_leaf;
};

NetworkKeys read_network(const yaml::Value& v, engine::ClusterTopologySpec& topology) {
  yaml::MapReader m = v.map();
  if (auto x = m.get("topology"))
    topology.fabric.kind =
        x->choice<engine::FabricKind>({{"single-switch", engine::FabricKind::single_switch},
                                       {"fat-tree", engine::FabricKind::fat_tree},
                                       {"rail-optimized", engine::FabricKind::rail_optimized}});
  if (auto x = m.get("nic_bandwidth")) topology.node.nic_bandwidth = positive_bandwidth(*x);
  auto nics = m.get("nics_per_node");
  if (nics) topology.node.nics = nics->count(1, limits::kGpusPerNode);
  if (auto x = m.get("latency")) topology.fabric.latency = x->time();
  // What the NCCL network plugin reports as its latency (aws-ofi-nccl on AWS: 75 or 35 µs).
  if (auto x = m.get("plugin_latency")) topology.node.nic_plugin_latency = x->time();
  if (auto x = m.get("link"))
    topology.fabric.link_kind = x->choice<engine::LinkKind>(
        {{"ib", engine::LinkKind::ib}, {"ethernet", engine::LinkKind::ethernet}});
  if (auto x = m.get("oversubscription")) topology.fabric.oversubscription = x->number(1.0);
  auto per_leaf = m.get("nics_per_leaf");
  if (per_leaf) topology.fabric.nics_per_leaf = per_leaf->count(1, limits::kFabricPorts);
  if (auto x = m.get("spines")) topology.fabric.spines = x->count(1, limits::kFabricPorts);
  // A third level: pods of leaves joined by core switches (docs/topology.md "Fabrics").
  auto pod = m.get("leaves_per_pod");
  if (pod) topology.fabric.leaves_per_pod = pod->count(1, limits::kFabricPorts);
  auto pod_over = m.get("pod_oversubscription");
  if (pod_over) topology.fabric.pod_oversubscription = pod_over->number(1.0);
  auto cores = m.get("cores");
  if (cores) topology.fabric.cores = cores->count(1, limits::kFabricPorts);
  // SHARP-capable switches (in-network reduction): the tuner may pick CollNet for all-reduce.
  if (auto x = m.get("sharp")) topology.fabric.sharp = x->boolean();
  m.finish();
  if (!pod) {
    for (const auto& key : {pod_over, cores})
      if (key)
        key->fail(
            "pods are not configured; allowed: this key together with leaves_per_pod (a fat tree "
            "of three levels)");
  } else if (topology.fabric.kind != engine::FabricKind::fat_tree) {
    pod->fail("pods exist only in a fat tree; allowed: leaves_per_pod with topology: fat-tree");
  }
  return {nics, per_leaf};
}

// cluster.host: the node's host memory, over the preset's figures.
void read_host(const yaml::Value& v, HostSpec& host) {
  yaml::MapReader m = v.map();
  if (auto x = m.get("memory")) {
    host.memory_bytes = x->size();
    if (!(host.memory_bytes > 0)) x->fail("host memory must be positive, e.g. 2TB");
  }
  if (auto x = m.get("memory_bandwidth"))
    host.memory_bandwidth = positive_bandwidth(*x).bytes_per_second();
  if (auto x = m.get("memory_efficiency")) host.memory_efficiency = x->number(1e-3, 1.0);
  m.finish();
}

// `node: {from_topo: FILE}`: the matrix of `nvidia-smi topo -m` in FILE (models/topo_node.hpp).
TopoDescription read_from_topo(const yaml::Value& node, const std::filesystem::path& base_dir,
                               std::optional<yaml::Value>& where) {
  yaml::MapReader m = node.map();
  where = m.require("from_topo", "a file holding `nvidia-smi topo -m` output, e.g. topo.txt");
  m.finish();
  const std::string path = existing_file(*where, base_dir);
  try {
    return read_nvidia_smi_topo(path);
  } catch (const TopoParseError& e) {
    where->fail(e.what());
  }
}

}  // namespace

ClusterConfig read_cluster(const yaml::Value& value, const std::filesystem::path& base_dir) {
  yaml::MapReader m = value.map();
  ClusterConfig c;
  if (auto x = m.get("nodes")) c.nodes = x->count(1, limits::kNodes);
  const NodeSpec* preset = nullptr;
  std::optional<TopoDescription> topo;
  std::optional<yaml::Value> topo_key;
  if (auto x = m.get("node")) {
    if (x->is_map()) {
      topo = read_from_topo(*x, base_dir, topo_key);
    } else {
      const std::string name = x->text();
      preset = find_node(name);
      if (preset == nullptr) x->fail_choice(name, node_names(), "node preset");
      c.node_preset = preset->name;
      c.topology.node = preset->topology;
      c.host = preset->host;
    }
  }
  const char* need = topo ? "the GPU model, which `nvidia-smi topo -m` does not print, e.g. "
                            "gpu: H100-SXM5-80GB (clustersim presets gpus)"
                          : "a node preset (node: dgx-a100) or gpus_per_node and gpu";
  auto gpus = preset != nullptr || topo ? m.get("gpus_per_node") : m.require("gpus_per_node", need);
  const GpuSpec* base = preset != nullptr ? find_gpu(preset->gpu) : nullptr;
  auto gpu = preset != nullptr ? m.get("gpu") : m.require("gpu", need);
  if (gpu) {
    c.gpu = read_gpu(*gpu, base);
  } else if (base != nullptr) {
    c.gpu = *base;
  } else {
    m.fail("node preset '" + preset->name + "' names GPU '" + preset->gpu +
           "', which is not a GPU preset; give gpu explicitly");
  }
  // The matrix first (its NVLink generation needs the GPU), then every explicit key over it.
  if (topo) apply_topo_node(node_from_topo(*topo, &c.gpu), c.topology.node);
  // A preset's rails per GPU (aws-p5: four NICs a GPU) stay per GPU when gpus_per_node changes.
  const int rails = engine::rails_per_nic_device(c.topology.node);
  if (gpus) c.topology.node.gpus = gpus->count(1, limits::kGpusPerNode);
  bool per_switch_stated = false;
  if (auto x = m.get("intra_node")) per_switch_stated = read_intra_node(*x, c.topology.node);
  NetworkKeys network;
  if (auto x = m.get("network")) network = read_network(*x, c.topology);
  const std::optional<yaml::Value>& nics = network.nics_per_node;
  if (auto x = m.get("host")) read_host(*x, c.host);
  m.finish();
  c.topology.nodes = c.nodes;
  engine::NodeTopologySpec& node = c.topology.node;
  node.gpu_arch = gpu_arch_of(c.gpu.name);
  node.nvls = node.gpu_arch >= 90 && node.fabric == engine::IntraNodeFabric::nvswitch;
  // Unstated: a node whose GPU count the default of two GPUs per PCIe switch does not divide (a
  // single GPU, say) gets one switch per GPU.
  if (!per_switch_stated && node.gpus_per_pcie_switch > 0 &&
      node.gpus % node.gpus_per_pcie_switch != 0)
    node.gpus_per_pcie_switch = 1;
  if (node.nics > node.gpus) {
    // Unstated: a smaller node than the preset (or the default 8) keeps the preset's NICs per GPU
    // (one, or its rails). Stated as a multiple of the GPUs: each GPU's share are its rails
    // (engine::nic_devices).
    if (!nics)
      node.nics = node.gpus * rails;
    else if (node.nics % node.gpus != 0)
      nics->fail(std::to_string(node.nics) + " NICs for " + std::to_string(node.gpus) +
                 " GPUs per node; allowed: nics_per_node <= gpus_per_node, or a multiple of "
                 "gpus_per_node (that many rails per GPU, grouped as one network device)");
  }
  // A fat tree keeps a GPU's rails on one leaf (engine build_fabric), so a leaf needs them all.
  const int rails_now = engine::rails_per_nic_device(node);
  if (c.nodes > 1 && c.topology.fabric.kind == engine::FabricKind::fat_tree &&
      engine::nic_devices_per_leaf(node, c.topology.fabric) < 1) {
    const std::string what =
        "nics_per_leaf " + std::to_string(c.topology.fabric.nics_per_leaf) +
        " is fewer than a GPU's " + std::to_string(rails_now) +
        " NICs, which share a leaf; allowed: nics_per_leaf >= " + std::to_string(rails_now);
    if (network.nics_per_leaf) network.nics_per_leaf->fail(what);
    if (nics) nics->fail(what);
    m.fail(what);
  }
  c.gpu.host_memory_bandwidth = c.host.rank_bandwidth(node.gpus);
  return c;
}

}  // namespace clustersim::models::detail
