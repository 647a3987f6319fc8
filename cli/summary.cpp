#include "cli/summary.hpp"

#include <cmath>
#include <cstdio>
#include <string>

#include "engine/format.hpp"

namespace clustersim::cli {

using engine::format_bytes;
using engine::format_rate;
using engine::format_seconds;

namespace {
std::string printf_string(const char* fmt, double v, const char* unit) {
  char buf[64];
  std::snprintf(buf, sizeof buf, fmt, v, unit);
  return buf;
}
std::string percent(double fraction) {
  return printf_string("%.1f%s", fraction * 100.0, " %");
}
// The busiest links, the notes and the simulator's own figures.
void print_links_and_notes(std::ostream& out, const models::Result& r) {
  char line[256];
  if (!r.links.empty()) {
    out << "  busiest links:\n";
    for (std::size_t i = 0; i < r.links.size() && i < 5; ++i) {
      const auto& l = r.links[i];
      std::snprintf(line, sizeof line, "    %-36s %-8s %6.1f %% of %s, %s per iteration\n",
                    l.name.c_str(), l.kind.c_str(), l.utilization * 100.0,
                    format_rate(l.bandwidth).c_str(), format_bytes(l.bytes).c_str());
      out << line;
    }
  }
  for (const auto& note : r.notes)
    out << "  note: " << note << "\n";
  out << "  simulated " << r.events << " events in " << format_seconds(r.wall_s) << "\n";
}

// The plan line: parallelism and batch.
void print_plan(std::ostream& out, const models::Scenario& sc) {
  out << "  plan: tp " << sc.parallel.tp << ", pp " << sc.parallel.pp << ", dp " << sc.parallel.dp
      << ", ep " << sc.parallel.ep
      << (sc.parallel.cp > 1
              ? ", cp " + std::to_string(sc.parallel.cp) + " (" +
                    std::string(models::kContextParallelCommNames.name(sc.parallel.cp_comm)) + ")"
              : std::string())
      << "; global batch " << sc.training.global_batch << ", micro-batch "
      << sc.training.micro_batch << ", " << sc.num_microbatches()
      << " micro-batches per iteration\n\n";
}
}  // namespace

void print_summary(std::ostream& out, const models::Scenario& sc, const models::Result& r) {
  char line[256];
  auto row = [&](const char* label, const std::string& value) {
    std::snprintf(line, sizeof line, "  %-24s %s\n", label, value.c_str());
    out << line;
  };
  out << "clustersim " << CLUSTERSIM_VERSION << " | " << r.scenario << " | " << r.world_size
      << " GPUs (" << sc.cluster.nodes << " x " << sc.cluster.topology.node.gpus << " "
      << sc.cluster.gpu.name << ") | network model " << r.network_model << "\n";
  if (r.from_traces) {
    out << "  workload: Chakra traces " << sc.workload.chakra << ".<rank>.et"
        << (sc.workload.comm_groups.empty() ? std::string()
                                            : ", comm groups " + sc.workload.comm_groups)
        << "\n\n";
  } else {
    print_plan(out, sc);
  }

  row("iteration time", format_seconds(r.iteration_time_s));
  if (r.from_traces) {
    // Traces hold no batch, model or peak precision: these figures are unknown, not zero.
    row("throughput", "unknown (a Chakra workload names no batch)");
    row("TFLOP/s per GPU",
        printf_string("%.1f%s", r.tflops_per_gpu, "") + " (the traces' num_ops; MFU unknown)");
  } else {
    row("throughput", printf_string("%.1f %s", r.samples_per_s, "samples/s") + ", " +
                          printf_string("%.0f %s", r.tokens_per_s, "tokens/s"));
    row("TFLOP/s per GPU",
        printf_string("%.1f%s", r.tflops_per_gpu, "") + " (MFU " + percent(r.mfu) + ")");
  }
  const auto& b = r.breakdown_s;
  const double t = r.iteration_time_s > 0 ? r.iteration_time_s : 1.0;
  auto part = [&](const char* name, double s) {
    return std::string(name) + " " + format_seconds(s) + " (" + percent(s / t) + ")";
  };
  row(("critical rank " + std::to_string(r.critical_rank)).c_str(),
      part("compute", b.compute) + ", " + part("recompute", b.recompute) + ", " +
          part("idle", b.idle));
  const auto& e = r.exposed_comm_s;
  row("exposed communication", "dp " + format_seconds(e.dp) + ", tp " + format_seconds(e.tp) +
                                   ", pp " + format_seconds(e.pp) + ", ep " + format_seconds(e.ep) +
                                   (e.cp > 0 ? ", cp " + format_seconds(e.cp) : std::string()) +
                                   " (" + percent(r.comm_overlap_fraction) +
                                   " of communication hidden)");
  row("pipeline bubble", percent(r.bubble_fraction));
  if (r.offload.any())
    row("offload", "rank " + std::to_string(r.critical_rank) + ": d2h " +
                       format_bytes(r.offload.to_host_bytes) + " in " +
                       format_seconds(r.offload.to_host_s) + ", CPU step " +
                       format_seconds(r.offload.host_step_s) + ", h2d " +
                       format_bytes(r.offload.from_host_bytes) + " in " +
                       format_seconds(r.offload.from_host_s));

  if (r.from_traces) {
    row("memory per GPU", "not estimated (Chakra traces carry no model to size)");
    print_links_and_notes(out, r);
    return;
  }
  const auto& m = r.memory;
  const models::MemoryVerdict verdict = m.verdict();
  const char* verdict_text = verdict == models::MemoryVerdict::fits    ? " - fits"
                             : verdict == models::MemoryVerdict::tight ? " - TIGHT"
                                                                       : " - DOES NOT FIT";
  row("memory per GPU", format_bytes(m.total()) + " of " + format_bytes(m.capacity) + verdict_text +
                            " (peak at " + m.phase + ", rank " + std::to_string(m.peak_rank) + ")");
  row("", "weights " + format_bytes(m.peak.weights) + ", gradients " +
              format_bytes(m.peak.gradients) + ", optimizer " + format_bytes(m.peak.optimizer) +
              ", activations " + format_bytes(m.peak.activations) + ", buffers " +
              format_bytes(m.peak.buffers));
  row("", "CUDA context " + format_bytes(m.overheads.cuda_context) + ", cuBLAS " +
              format_bytes(m.overheads.workspaces) + ", NCCL " + format_bytes(m.overheads.nccl) +
              "; fragmentation allowance " + format_bytes(m.overheads.fragmentation));
  if (m.startup_peak > 0)
    row("", "start-up " + format_bytes(m.startup_total()) +
                " (parallel.fsdp.init: device: the whole model built on the GPU, one unit "
                "flattened, before FSDP shards it); cached after it " +
                format_bytes(m.overheads.startup_cache) + " (in reserved, freed on demand)");
  if (m.startup_total() > m.capacity)
    out << "  ! start-up needs " << format_bytes(m.startup_total()) << ", more than the GPU's "
        << format_bytes(m.capacity) << ": build the model sharded (parallel.fsdp.init: sharded)\n";
  if (verdict == models::MemoryVerdict::tight)
    out << "  ! " << format_bytes(m.headroom()) << " of headroom is less than the allocator's "
        << "fragmentation allowance (" << format_bytes(m.overheads.fragmentation)
        << "): whether it fits depends on fragmentation\n";
  if (m.host_per_node > 0)
    row("host memory per node", format_bytes(m.host_per_node) + " of " +
                                    format_bytes(m.host_capacity) +
                                    (m.host_fits() ? " - fits" : " - DOES NOT FIT") +
                                    " (offloaded states, gradient shards, activations)");
  if (!m.host_fits())
    out << "  ! the node's ranks keep " << format_bytes(m.host_per_node)
        << " in host memory, more than its " << format_bytes(m.host_capacity) << "\n";
  if (m.total() > m.capacity)
    out << "  ! rank " << m.peak_rank << " needs " << format_bytes(m.total()) << ", "
        << format_bytes(m.total() - m.capacity) << " more than the GPU's "
        << format_bytes(m.capacity) << "; the largest term is " << m.largest_term() << "\n";
  if (!m.suggestions.empty()) {
    out << "  to fit, each change alone (re-estimated):\n";
    for (const auto& x : m.suggestions) {
      std::snprintf(line, sizeof line, "    --set %-36s %s (%s)\n", x.change.c_str(),
                    format_bytes(x.peak_bytes).c_str(), x.verdict.c_str());
      out << line;
    }
    if (m.combined) {
      std::snprintf(line, sizeof line, "%.2f", m.combined->estimated_time_ratio);
      out << "  together: " << m.combined->as_set_flags() << "\n    "
          << format_bytes(m.combined->peak_bytes) << " (" << m.combined->verdict
          << "); the plan estimate's iteration time x" << line << "\n";
    } else if (!m.a_change_alone_fits()) {
      out << "  no combination of these changes fits\n";
    }
  }

  print_links_and_notes(out, r);
}

void print_phase_seconds(std::ostream& out,
                         const std::vector<std::pair<std::string, double>>& phases) {
  out << "  phases:";
  const char* separator = " ";
  for (const auto& [phase, seconds] : phases) {
    out << separator << phase << " " << format_seconds(seconds);
    separator = ", ";
  }
  out << "\n";
}

}  // namespace clustersim::cli
