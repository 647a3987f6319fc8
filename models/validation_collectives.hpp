// Published nccl-tests results (validation/collectives/*.yaml) replayed on the simulator: each
// file becomes a cluster and a message-size sweep of one collective over all its GPUs, each point
// simulated alone on the flow model, and compared as nccl-tests reports it (busbw = algbw ×
// factor). docs/network-validation.md.
#pragma once

#include <string>
#include <vector>

namespace clustersim::models {

struct CollectiveCaseResult {
  std::string file;        // file name inside the directory
  std::string collective;  // all_reduce, all_gather, ...
  int nodes = 0;
  int gpus_per_node = 0;
  double bytes = 0.0;  // the nccl-tests size column
  // Published: out-of-place bus bandwidth (GB/s; a published range's midpoint) and time (µs,
  // 0 when not published).
  double published_busbw_GBps = 0.0;
  double published_time_us = 0.0;
  double simulated_busbw_GBps = 0.0;
  double simulated_time_us = 0.0;
  std::string algorithm;  // what the tuner chose (or the file's NCCL_ALGO)
  std::string protocol;
  int channels = 0;
  // Points that are not compared: a file whose system we cannot express (one row per file,
  // bytes = 0), or a row the file's notes call an outlier. `reason` says why.
  bool excluded = false;
  std::string reason;
  // Relative error of the compared figure: bus bandwidth for sizes >= 1 MiB, time below.
  double error() const;
  bool small() const { return bytes < 1024.0 * 1024.0; }
};

// Every *.yaml file of `dir` (sorted by name). Throws std::runtime_error on a file that does not
// follow the schema of validation/collectives/README.md.
std::vector<CollectiveCaseResult> run_collective_validation(const std::string& dir);

}  // namespace clustersim::models
