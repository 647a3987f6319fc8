// What the pipeline tests (test_pipeline.cpp, test_dualpipe.cpp) share: a refused plan's error,
// and the model of identical stages: 24
// identical layers, one GPU per stage, no launch overhead, free communication. A layer's forward
// is 1e9 FLOPs at 100 TFLOP/s = 10 us, its backward 20 us (a layer list's backward splits into B
// and W of 10 us each under the zero-bubble schedules and dualpipe). With one parameter per layer
// (the default `params`) the optimizer step (at most 24 params × 28 B at 1 TB/s ≈ 0.7 ns) and the
// bytes term of every op are negligible. `layer_extra`, when given, adds fields to the layer,
// such as ", activation_bytes: 1MB"; `parallel_extra` adds keys to `parallel`, such as
// ", pp_p2p_overlap: full".
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "models/plans/training_schedule.hpp"
#include "models/scenario.hpp"

namespace clustersim::models {

// Building `text` (read as file `file`) fails on `key` (named after the file and line) with a
// message that contains `says`.
inline void expect_plan_error(const std::string& text, const std::string& file,
                              const std::string& key, const std::string& says) {
  try {
    build_schedule(parse_scenario(text, file));
    ADD_FAILURE() << "no error for " << key;
  } catch (const ScenarioError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find(file + ":"), std::string::npos) << what;
    EXPECT_NE(what.find(key + ":"), std::string::npos) << what;
    EXPECT_NE(what.find(says), std::string::npos) << what;
  }
}

inline std::string uniform_pipeline_scenario(const std::string& schedule, int p, int m, int v,
                                             const std::string& params = "1",
                                             const std::string& layer_extra = "",
                                             const std::string& parallel_extra = "") {
  return "name: uniform-pipeline\n"
         "cluster:\n"
         "  nodes: 1\n"
         "  gpus_per_node: " +
         std::to_string(p) +
         "\n"
         "  gpu: {peak_tflops: {bf16: 100, fp32: 10}, hbm_bandwidth: 1TB/s, memory: 80GB,\n"
         "        compute_efficiency: 1, memory_efficiency: 1, launch_overhead: 0us}\n"
         "model: {name: uniform, layers: [{name: block, params: " +
         params + ", forward_flops: 1e9" + layer_extra +
         ", repeat: 24}]}\n"
         "training: {global_batch: " +
         std::to_string(m) +
         ", micro_batch: 1, precision: bf16}\n"
         "parallel: {pp: " +
         std::to_string(p) + ", schedule: " + schedule + ", virtual_stages: " + std::to_string(v) +
         parallel_extra +
         "}\n"
         "simulation: {network_model: ideal}\n";
}

// Two stages on one NVSwitch node, 100 GB/s per direction at 1 us a hop. A send_recv over GPU →
// NVSwitch → GPU runs as NCCL's send (docs/network.md "Sends"; a pipeline of two posts it on a
// communicator of two ranks either way): 5 ring channels (100 / 20 GB/s), so 8 p2p channels and
// nChannelsMin 4; a send of S = 412 kB takes 4 channels, each a part of 103 kB, at most 20.6 GB/s
// a channel (82.4 in all, below the link's 100), and a part of one chunk (512 KiB) or less
// crosses the sender's and then the receiver's stage: α + 2 × (S/4) / 20.6 GB/s = 2 + 2 × 5 = 12
// us. One layer a stage: forward 1e9 FLOPs at 100 TFLOP/s = 10 us, backward 20 us; 412 kB of
// activation per micro-batch. Two micro-batches. One parameter a layer: the optimizer step is
// under a nanosecond. `parallel_extra` adds keys to `parallel` ("pipeline_engine: deepspeed");
// `layers` (2: one a stage) 4 for an interleaved plan of 2 chunks a stage.
inline std::string two_stage_pipeline(const std::string& parallel_extra, int layers = 2) {
  return R"(
name: two-stages
cluster:
  nodes: 1
  gpus_per_node: 2
  gpu: {peak_tflops: {bf16: 100, fp32: 10}, hbm_bandwidth: 1TB/s, memory: 80GB,
        compute_efficiency: 1, memory_efficiency: 1, launch_overhead: 0us}
  intra_node: {fabric: nvswitch, nvlink_bandwidth: 100GB/s, nvlink_latency: 1us}
model: {name: two, layers: [{name: block, params: 1, forward_flops: 1e9, activation_bytes: 412KB, repeat: )" +
         std::to_string(layers) + R"(}]}
training: {global_batch: 2, micro_batch: 1, precision: bf16}
parallel: {pp: 2)" +
         (parallel_extra.empty() ? "" : ", " + parallel_extra) + R"(}
simulation: {network_model: analytical, link_efficiency: {nvlink: 1}, fold: none}
)";
}

}  // namespace clustersim::models
