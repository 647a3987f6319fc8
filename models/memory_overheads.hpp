// What a rank's memory holds outside PyTorch's allocator (docs/memory.md "What is counted";
// validation/memory/OVERHEADS.md): the CUDA context, cuBLAS workspaces and NCCL's buffers, by
// GPU family and by the communicators a rank belongs to.
#pragma once

#include <vector>

#include "engine/schedule.hpp"
#include "models/hardware.hpp"
#include "models/scenario.hpp"

namespace clustersim::models {

// With lazy module loading (CUDA >= 11.7, PyTorch >= 1.13) the context starts at ~0.3-0.43 GB
// and grows as the step's kernels (cuBLAS, NCCL, attention) load: 512 MiB for every family.
inline constexpr double kCudaContextBytes = 512.0 * 1024 * 1024;

// cuBLAS and cuBLASLt workspaces of the compute stream, by the GPU's family.
double cublas_workspaces(const GpuSpec& gpu);

struct Communicator {
  std::vector<engine::Rank> ranks;
  int connections_per_channel = 2;  // ring + tree; all-to-all: one per peer
  // Only send/recv to its neighbours in the group (the pipeline): p2p buffers per peer instead.
  bool p2p_only = false;
};

// NCCL's buffers for the communicators of one rank.
double nccl_bytes(const Scenario& sc, const std::vector<Communicator>& comms);

}  // namespace clustersim::models
