// Huge counts (issue 10): every count has an upper bound (models/limits.hpp, docs/scenario.md
// "Limits") and every product of counts is checked in 64 bits, so a huge value is a ScenarioError
// naming the key that drives it, never a wrapped-around world size (SIGFPE), a std::bad_alloc or
// a run that eats the machine's memory.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "models/limits.hpp"
#include "models/scenario.hpp"

namespace clustersim::models {
namespace {

const std::string kScenarios = CLUSTERSIM_SCENARIOS_DIR "/";
const std::string kLlama = kScenarios + "llama2-7b-ddp-2xdgx-a100.yaml";
const std::string kMixtral = kScenarios + "mixtral-8x7b-ep8-dgx-h100.yaml";
const std::string kResnet = kScenarios + "resnet50-ddp-dgx-a100.yaml";

// Loads `file` with `overrides`; the error must cite `flag` (the --set that is to blame), the key
// and `fragment`.
void expect_rejected(const std::string& file, const std::vector<std::string>& overrides,
                     const std::string& flag, const std::string& key, const std::string& fragment) {
  try {
    load_scenario(file, overrides);
    ADD_FAILURE() << "accepted; expected an error on " << key;
  } catch (const ScenarioError& e) {
    const std::string m = e.what();
    EXPECT_TRUE(m.starts_with("--set " + flag + ": " + key + ": ")) << m;
    EXPECT_NE(m.find(fragment), std::string::npos) << m;
  }
}

TEST(ScenarioLimits, NodesPastTheBoundNameTheKeyInsteadOfWrappingTheWorldSize) {
  // 536870912 · 8 wrapped a 32-bit world size to 0 (SIGFPE); 536870913 to 8 (a runaway).
  for (const std::string v : {"536870912", "536870913", "1e9"})
    expect_rejected(kLlama, {"cluster.nodes=" + v}, "cluster.nodes=" + v, "cluster.nodes",
                    "allowed: integers from 1 to 65536");
}

TEST(ScenarioLimits, WorldSizeIsBoundedAsAProduct) {
  expect_rejected(kLlama, {"cluster.nodes=65536", "cluster.gpus_per_node=65536"},
                  "cluster.gpus_per_node=65536", "cluster.gpus_per_node",
                  "integers from 1 to 1024");
  // Each factor within its bound, the product not: blamed on the key written last in the file
  // order, with the figures.
  expect_rejected(kLlama, {"cluster.nodes=65536", "cluster.gpus_per_node=1024"},
                  "cluster.nodes=65536", "cluster.nodes",
                  "65536 · 1024 = 67108864 GPUs exceeds the limit of 262144");
}

TEST(ScenarioLimits, ModelAndTrainingSizesAreBounded) {
  expect_rejected(kLlama, {"training.seq_len=1e9"}, "training.seq_len=1e9", "training.seq_len",
                  "integers from 1 to 16777216");
  expect_rejected(kLlama, {"model.hidden_size=1e9"}, "model.hidden_size=1e9", "model.hidden_size",
                  "integers from 1 to 1048576");
  expect_rejected(kLlama, {"training.global_batch=1e18"}, "training.global_batch=1e18",
                  "training.global_batch", "integers from 1 to 1099511627776");
  expect_rejected(kMixtral, {"model.moe.num_experts=1000000"}, "model.moe.num_experts=1000000",
                  "model.moe.num_experts", "integers from 1 to 65536");
  expect_rejected(kLlama, {"cluster.network.spines=1e9"}, "cluster.network.spines=1e9",
                  "cluster.network.spines", "integers from 1 to 65536");
  expect_rejected(kLlama, {"simulation.iterations=1e6"}, "simulation.iterations=1e6",
                  "simulation.iterations", "integers from 1 to 1000");
}

TEST(ScenarioLimits, TokensPerMicroBatchAreBounded) {
  // Each within its bound; 65536 · 16777216 tokens is not.
  expect_rejected(kLlama, {"training.seq_len=16777216", "training.micro_batch=65536"},
                  "training.micro_batch=65536", "training.micro_batch",
                  "tokens per micro-batch (micro_batch · seq_len) = 1099511627776 exceeds");
}

TEST(ScenarioLimits, LayerRepeatsAreBoundedOneByOneAndInTotal) {
  const std::string one =
      "model={layers: [{name: b, params: 1e6, forward_flops: 1e9, repeat: 1e9}]}";
  expect_rejected(kResnet, {one}, one, "model.layers[0].repeat", "integers from 1 to 10000");
  const std::string two =
      "model={layers: [{name: b, params: 1, forward_flops: 1, repeat: 10000}, "
      "{name: c, params: 1, forward_flops: 1, repeat: 2}]}";
  expect_rejected(kResnet, {two}, two, "model.layers", "= 10002 exceeds the limit of 10000");
}

TEST(ScenarioLimits, MicroBatchesPerIterationAreBounded) {
  // 1e9 samples over 16 data-parallel ranks: 62.5 M micro-batches, a schedule of billions of ops.
  expect_rejected(kLlama, {"training.global_batch=1e9"}, "training.global_batch=1e9",
                  "training.global_batch", "= 62500000 exceeds the limit of 65536");
}

TEST(ScenarioLimits, FabricLinksAreBounded) {
  expect_rejected(
      kLlama, {"cluster.nodes=2048", "training.global_batch=16384", "cluster.network.spines=65536"},
      "cluster.network.spines=65536", "cluster.network.spines",
      "(512 leaves · 65536 spines) = 33554432 exceeds the limit of 4194304");
}

TEST(ScenarioLimits, ScheduleSizeIsEstimatedBeforeBuildingAndBlamesItsDriver) {
  // 2048 ranks · 64 micro-batches · 2 · 34 layers = 8.9 M ops per iteration: fine once, not ten
  // times.
  const std::vector<std::string> big = {"cluster.nodes=256", "training.global_batch=131072"};
  EXPECT_NO_THROW(load_scenario(kLlama, big));
  auto more = big;
  more.push_back("simulation.iterations=10");
  expect_rejected(kLlama, more, "simulation.iterations=10", "simulation.iterations",
                  "the schedule would have at least 89128960 ops");
  expect_rejected(kLlama, {"cluster.nodes=256", "training.global_batch=1310720"},
                  "training.global_batch=1310720", "training.global_batch",
                  "more than the limit of 50000000");
}

TEST(ScenarioLimits, ShippedScenariosAreWellInsideTheLimits) {
  for (const char* name : {"gpt3-175b-1024xA100.yaml", "llama3-70b-8xdgx-h100-interleaved.yaml",
                           "deepseek-moe-16b-ep16-4xdgx-h100.yaml"})
    EXPECT_NO_THROW(load_scenario(kScenarios + name)) << name;
}

}  // namespace
}  // namespace clustersim::models
