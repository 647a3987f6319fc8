// Published per-GPU peak-memory figures against the memory model (validation/memory/, README.md
// there): each case is a scenario plus a `published:` list of {metric, value, source, url,
// notes}. The metric says what was measured, and the simulated figure is taken to match:
//   model_state_gb           weights + gradients + optimizer states, GB (1e9)
//   peak_memory_active_gib   allocated tensors (PyTorch "active"), GiB
//   max_memory_allocated_gb  allocated tensors, GB
//   peak_memory_gb           allocated tensors, GB (the source does not say which statistic)
//   peak_memory_reserved_gb  allocated + the allocator's fragmentation, GB
//   nvidia_smi_used_mib      reserved + CUDA context + NCCL, MiB
#pragma once

#include <string>
#include <vector>

namespace clustersim::models {

struct MemoryCaseResult {
  std::string id;  // the file's stem
  std::string file;
  std::string metric;  // as published
  std::string unit;    // "GB", "GiB", "MiB"
  double published = 0;
  double simulated = 0;  // in the metric's unit
  double error = 0;      // (simulated − published) / published
  std::string phase;     // where the simulated peak happens
  std::string failure;   // why the case could not be run (empty when it ran)
};

// Every *.yaml of `dir`, in name order, one result per published figure.
std::vector<MemoryCaseResult> run_memory_validation(const std::string& dir);

}  // namespace clustersim::models
