// The summary's notes on the largest collectives say when a multi-node ring's figure rests on
// NCCL's per-channel network rate beyond the NICs it was measured on (docs/network.md "A
// channel's network connection"): kNetChannelGBps = 20.6 GB/s a channel, fitted on 8 × 400 Gb/s;
// and when the largest send's p2p channels, not its route, set its rate (docs/network.md "Sends").
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "models/run_scenario.hpp"

namespace clustersim::models {
namespace {

// Two DGX H100 nodes, data parallel only, a ring all-reduce of the gradients across both nodes
// (algorithms: ring forces it), NICs of `nic` each, eight a node.
std::vector<std::string> notes_with_nics(const std::string& nic,
                                         const std::string& nccl = "channels: 16") {
  const Scenario sc = parse_scenario(R"(
cluster:
  nodes: 2
  node: dgx-h100
  network: {nic_bandwidth: )" + nic + R"(, nics_per_node: 8}
model:
  layers: [{name: block, params: 5e8, forward_flops: 1e12, repeat: 4}]
training: {global_batch: 16, micro_batch: 1, precision: bf16, optimizer: adam}
parallel: {data_parallel: ddp}
simulation: {algorithms: {all_reduce: ring}, nccl: {)" +
                                         nccl + R"(}}
)",
                                     "nic-notes.yaml");
  return run_scenario(sc).result.notes;
}

bool any_contains(const std::vector<std::string>& notes, const std::string& text) {
  return std::any_of(notes.begin(), notes.end(),
                     [&](const std::string& n) { return n.find(text) != std::string::npos; });
}

// 16 channels × 20.6 GB/s = 329.6 GB/s, below 8 × 800 Gb/s = 8 × 100 GB/s = 800 GB/s: the
// channels, not the NICs, set the rate, on NICs twice as fast as any the rate was fitted on.
TEST(CollectiveNotes, A800GbNicRingSaysItsRateRestsOnTheChannelsUnverifiedCap) {
  const auto notes = notes_with_nics("800Gb/s");
  EXPECT_TRUE(any_contains(notes, "ring / ")) << "no collective note at all";
  EXPECT_TRUE(any_contains(notes, "its 16 channels carry at most 329.6 GB/s"));
  EXPECT_TRUE(any_contains(notes, "below the node's 8 NICs' 800 GB/s"));
  EXPECT_TRUE(any_contains(notes, "unverified on 800 Gb/s ones"));
}

// On the 400 Gb/s NICs the rate was fitted on, the ring's note stays as it was.
TEST(CollectiveNotes, A400GbNicRingHasNoCaveat) {
  const auto notes = notes_with_nics("400Gb/s");
  EXPECT_TRUE(any_contains(notes, "ring / "));
  EXPECT_FALSE(any_contains(notes, "unverified"));
}

// simulation.nccl.min_ctas (NCCL_MIN_CTAS) is a floor on the channels: 24 channels × 20.6 GB/s =
// 494.4 GB/s, still below the 800 GB/s of the NICs; a floor under the count changes nothing.
TEST(CollectiveNotes, MinCtasRaisesTheRingsChannelsToItsFloor) {
  EXPECT_TRUE(any_contains(notes_with_nics("800Gb/s", "channels: 16, min_ctas: 24"),
                           "its 24 channels carry at most 494.4 GB/s"));
  EXPECT_TRUE(any_contains(notes_with_nics("800Gb/s", "channels: 16, min_ctas: 8"),
                           "its 16 channels carry at most 329.6 GB/s"));
  EXPECT_THROW(notes_with_nics("800Gb/s", "min_ctas: 0"), ScenarioError);
}

// `stages` pipeline stages (2 unless given) on one node of as many GPUs at 100 GB/s NVLink,
// `activation` a micro-batch, `parallel` more keys of the plan. A pair's communicator
// (docs/network.md "Sends"): 5 ring channels (100 / 20 GB/s), so 8 p2p channels a peer may take,
// nChannelsMin 8 / 2 = 4, a channel at most 20.6 GB/s.
std::vector<std::string> notes_with_activation(const std::string& activation, int stages = 2,
                                               const std::string& parallel = "") {
  const Scenario sc = parse_scenario(R"(
cluster:
  nodes: 1
  gpus_per_node: )" + std::to_string(stages) +
                                         R"(
  gpu: {peak_tflops: {bf16: 100, fp32: 10}, hbm_bandwidth: 1TB/s, memory: 80GB}
  intra_node: {fabric: nvswitch, nvlink_bandwidth: 100GB/s, nvlink_latency: 1us}
model: {name: two, layers: [{name: block, params: 1, forward_flops: 1e9, activation_bytes: )" +
                                         activation + R"(, repeat: 4}]}
training: {global_batch: 4, micro_batch: 1, precision: bf16}
parallel: {pp: )" + std::to_string(stages) +
                                         parallel + R"(}
simulation: {link_efficiency: {nvlink: 1}}
)",
                                     "send-notes.yaml");
  return run_scenario(sc).result.notes;
}

// 412 kB: 4 channels (103 kB parts), 82.4 GB/s, below the 100 GB/s route: the note says so. 256
// MB: 64 MB parts exceed 16 MiB, so 8 channels (32 MB parts), 164.8 GB/s, above the route: none.
TEST(CollectiveNotes, ASendWhoseChannelsBindSaysSo) {
  EXPECT_TRUE(any_contains(notes_with_activation("412KB"),
                           "pp send of 402.3 KiB inside a node: 4 p2p channels carry at most 82.4 "
                           "GB/s (20.6 GB/s a channel), below the route's 100.0 GB/s"));
  EXPECT_FALSE(any_contains(notes_with_activation("256MB"), "send of"));
}

// Four stages on a node of 4 such GPUs. Megatron's 1F1B posts its sends on the pipeline group's
// communicator (batch_isend_irecv): 8 p2p channels over 4 ranks give nChannelsMin 2, so 412 kB
// goes on 2 channels, 41.2 GB/s, and the note names the communicator. On a communicator of each
// pair, as `pp_send_communicator: pair` (a lone isend) says, it is 4 channels, 82.4 GB/s.
TEST(CollectiveNotes, ASendOnThePipelineGroupsCommunicatorSaysWhichItRanOn) {
  EXPECT_TRUE(any_contains(notes_with_activation("412KB", 4),
                           "pp send of 402.3 KiB inside a node on a communicator of 4 ranks: 2 p2p "
                           "channels carry at most 41.2 GB/s"));
  EXPECT_TRUE(any_contains(notes_with_activation("412KB", 4, ", pp_send_communicator: pair"),
                           "pp send of 402.3 KiB inside a node: 4 p2p channels carry at most 82.4 "
                           "GB/s"));
}

}  // namespace
}  // namespace clustersim::models
