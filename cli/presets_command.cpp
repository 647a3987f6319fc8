#include "cli/presets_command.hpp"

#include <cstdio>
#include <iostream>
#include <memory>
#include <variant>

#include "engine/format.hpp"
#include "models/hardware.hpp"
#include "models/model_costs.hpp"
#include "models/model_spec.hpp"

namespace clustersim::cli {

using engine::format_bytes;
using engine::format_rate;

namespace {

using models::Precision;

void print_gpus(std::ostream& out) {
  char line[256];
  std::snprintf(line, sizeof line, "%-18s %10s %10s %10s %10s %12s %10s\n", "GPU", "fp8 TF/s",
                "bf16 TF/s", "fp16 TF/s", "fp32 TF/s", "HBM", "memory");
  out << line;
  for (const auto& name : models::gpu_names()) {
    const auto* g = models::find_gpu(name);
    auto tf = [&](Precision p) { return g->peak_flops[static_cast<std::size_t>(p)] / 1e12; };
    std::snprintf(line, sizeof line, "%-18s %10.1f %10.1f %10.1f %10.1f %12s %10s\n", name.c_str(),
                  tf(Precision::fp8), tf(Precision::bf16), tf(Precision::fp16), tf(Precision::fp32),
                  format_rate(g->hbm_bandwidth).c_str(), format_bytes(g->memory_bytes).c_str());
    out << line;
  }
}

void print_nodes(std::ostream& out) {
  char line[256];
  std::snprintf(line, sizeof line, "%-24s %-16s %5s %-9s %14s %14s %-14s %s\n", "node", "GPU",
                "GPUs", "fabric", "NVLink/GPU", "PCIe/link", "NICs", "host memory");
  out << line;
  for (const auto& name : models::node_names()) {
    const auto* n = models::find_node(name);
    const auto& t = n->topology;
    const bool nvswitch = t.fabric == engine::IntraNodeFabric::nvswitch;
    const std::string nvlink = nvswitch || t.nvlink_bridges
                                   ? format_rate(t.nvlink_bandwidth.bytes_per_second())
                                   : std::string("-");
    const std::string nics =
        std::to_string(t.nics) + " x " +
        std::to_string(static_cast<int>(t.nic_bandwidth.bytes_per_second() * 8 / 1e9)) + " Gb/s";
    const std::string host =
        format_bytes(n->host.memory_bytes) + ", " + format_rate(n->host.memory_bandwidth) + " DRAM";
    std::snprintf(line, sizeof line, "%-24s %-16s %5d %-9s %14s %14s %-14s %s\n", name.c_str(),
                  n->gpu.c_str(), t.gpus, nvswitch ? "nvswitch" : "pcie", nvlink.c_str(),
                  format_rate(t.pcie_bandwidth.bytes_per_second()).c_str(), nics.c_str(),
                  host.c_str());
    out << line;
  }
  out << "bandwidths are per direction\n";
}

void print_models(std::ostream& out) {
  char line[256];
  std::snprintf(line, sizeof line, "%-14s %-12s %7s %7s %6s %9s %12s\n", "model", "kind", "layers",
                "hidden", "heads", "seq_len", "parameters");
  out << line;
  for (const auto& name : models::model_names()) {
    const auto* m = models::find_model(name);
    const int seq = m->default_seq_len > 0 ? m->default_seq_len : 1;
    const double params = models::total_params(models::expand_model(*m, seq));
    if (const auto* t = std::get_if<models::TransformerSpec>(&m->body)) {
      std::snprintf(line, sizeof line, "%-14s %-12s %7d %7ld %6d %9d %10.2f B\n", name.c_str(),
                    t->moe ? "moe" : "transformer", t->num_layers, t->hidden_size, t->num_heads,
                    m->default_seq_len, params / 1e9);
    } else {
      const auto& layers = std::get<std::vector<models::LayerSpec>>(m->body);
      int count = 0;
      for (const auto& l : layers)
        count += l.repeat;
      std::snprintf(line, sizeof line, "%-14s %-12s %7d %7s %6s %9s %10.2f M\n", name.c_str(),
                    "layer list", count, "-", "-", "-", params / 1e6);
    }
    out << line;
  }
}

}  // namespace

void add_presets_command(CLI::App& app, Action& action) {
  auto which = std::make_shared<std::string>("all");
  CLI::App* cmd = app.add_subcommand("presets", "List the built-in GPU, node and model presets");
  cmd->add_option("KIND", *which, "gpus, nodes or models (default: all)")
      ->check(CLI::IsMember({"all", "gpus", "nodes", "models"}));
  cmd->callback([which, &action] {
    action = [which] {
      const bool all = *which == "all";
      if (all || *which == "gpus") print_gpus(std::cout);
      if (all) std::cout << "\n";
      if (all || *which == "nodes") print_nodes(std::cout);
      if (all) std::cout << "\n";
      if (all || *which == "models") print_models(std::cout);
      return kExitOk;
    };
  });
}

}  // namespace clustersim::cli
