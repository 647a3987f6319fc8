// The size of a run known before it is built (issue 10, models/size_estimate.hpp): a lower bound
// of the ops from the scenario's counts, and a memory budget (--max-memory) that refuses a run
// estimated past it on the key that makes it large.
#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "models/scenario.hpp"
#include "models/size_estimate.hpp"

namespace clustersim::models {
namespace {

const std::string kLlama = std::string(CLUSTERSIM_SCENARIOS_DIR) + "/llama2-7b-ddp-2xdgx-a100.yaml";

TEST(SizeEstimate, OpsAreRanksTimesIterationsMicroBatchesAndLayers) {
  // 2 DGX A100 = 16 ranks, all data parallel; global batch 64 of micro-batch 1 over dp 16 = 4
  // micro-batches; Llama 2 7B has 32 blocks, plus embedding and head = 34 layers on one stage.
  const SizeEstimate one = estimate_size(load_scenario(kLlama));
  EXPECT_EQ(one.ops, 16 * 1 * 4 * 2 * 34);
  EXPECT_EQ(one.bytes, 16 * 1 * 4 * 2 * 34 * 150);
  EXPECT_EQ(one.key, "model");  // 4 micro-batches, 34 layers: the model makes it large
  EXPECT_EQ(one.factors, "16 ranks · 1 iteration(s) · 4 micro-batches · 2 · 34 layers per stage");
  const SizeEstimate three = estimate_size(load_scenario(kLlama, {"simulation.iterations=3"}));
  EXPECT_EQ(three.ops, 3 * one.ops);
  EXPECT_EQ(three.key, "simulation.iterations");
  const SizeEstimate batch = estimate_size(load_scenario(kLlama, {"training.global_batch=1024"}));
  EXPECT_EQ(batch.ops, 16 * 64 * 2 * 34);  // 1024 / 16 = 64 micro-batches
  EXPECT_EQ(batch.key, "training.global_batch");
}

// A folded run simulates one data-parallel replica: one rank of plain data parallelism, a whole
// shard group (the 8 ranks of a node) under HSDP.
TEST(SizeEstimate, AFoldKeepsOneRankOrOneHsdpShardGroup) {
  const SizeEstimate ddp = estimate_size(load_scenario(kLlama), /*folded=*/true);
  EXPECT_EQ(ddp.ops, 1 * 1 * 4 * 2 * 34);
  const SizeEstimate hsdp =
      estimate_size(load_scenario(kLlama, {"parallel.data_parallel=hsdp"}), /*folded=*/true);
  EXPECT_EQ(hsdp.ops, 8 * 1 * 4 * 2 * 34);
}

TEST(SizeEstimate, ARunPastTheBudgetIsRefusedOnItsKey) {
  const Scenario sc = load_scenario(kLlama, {"simulation.iterations=2"});
  const std::int64_t bytes = 16 * 2 * 4 * 2 * 34 * 150;  // 1,305,600
  EXPECT_NO_THROW(check_memory_budget(sc, bytes, "--max-memory X"));
  EXPECT_NO_THROW(check_memory_budget(sc, 0, "no budget"));
  try {
    check_memory_budget(sc, bytes - 1, "--max-memory 1MB");
    FAIL() << "accepted a run past its budget";
  } catch (const ScenarioError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("--set simulation.iterations=2: simulation.iterations: simulating it needs "
                     "at least 0.00131 GB (8704 ops"),
              std::string::npos)
        << m;
    EXPECT_NE(m.find("more than --max-memory 1MB"), std::string::npos) << m;
  }
}

const std::string kDeepSeek =
    std::string(CLUSTERSIM_SCENARIOS_DIR) + "/deepseek-moe-16b-ep16-4xdgx-h100.yaml";

// Flows in flight (issue 10): the expert all-to-all runs direct, every rank sending to each of the
// 15 others of its EP group at once, all 32 ranks together: 32 · 15 = 480 flows, 480 bytes each,
// and two events per op and per flow. Under the analytical model no flow is kept; forced to a
// ring, an all-to-all keeps one flow per rank, not counted.
TEST(SizeEstimate, AnExpertAllToAllKeepsRanksTimesPeersFlowsInFlight) {
  const Scenario sc = load_scenario(kDeepSeek);
  const SizeEstimate e = estimate_size(sc);
  EXPECT_EQ(e.flows, 32 * 15);
  EXPECT_EQ(e.events, 2 * (e.ops + 32 * 15));
  EXPECT_EQ(e.bytes, e.ops * 150 + 32 * 15 * 480);
  EXPECT_EQ(e.flow_key, "parallel.ep");
  EXPECT_EQ(e.flow_factors, "32 ranks · 15 peers (parallel.ep 16, all_to_all direct)");
  EXPECT_EQ(estimate_size(sc, false, "analytical").flows, 0);
  EXPECT_EQ(
      estimate_size(load_scenario(kDeepSeek, {"simulation.algorithms.all_to_all=ring"})).flows, 0);
  // A data-parallel all-reduce forced to direct: 16 ranks · 15 peers, blamed on the override.
  const SizeEstimate direct =
      estimate_size(load_scenario(kLlama, {"simulation.algorithms.all_reduce=direct"}));
  EXPECT_EQ(direct.flows, 16 * 15);
  EXPECT_EQ(direct.flow_key, "simulation.algorithms.all_reduce");
  EXPECT_EQ(estimate_size(load_scenario(kLlama)).flows, 0);  // ring/tree: no all-pairs flows
}

// 4,096 ranks in one EP group: 4096 · 4095 flows · 480 B = 8.051 GB, far more than the ops
// (4096 ranks · 1 micro-batch · 2 · 30 layers = 245,760 ops · 150 B = 0.037 GB), 8.09 GB in all:
// the budget error blames parallel.ep and offers a ring or the analytical model.
TEST(SizeEstimate, AllPairsFlowsPastTheBudgetBlameTheGroup) {
  const Scenario sc =
      load_scenario(kDeepSeek, {"cluster.nodes=512", "parallel.ep=4096",
                                "model.moe.num_experts=4096", "training.global_batch=4096"});
  EXPECT_EQ(estimate_size(sc).flows, 4096LL * 4095);
  try {
    check_memory_budget(sc, 4'000'000'000, "--max-memory 4GB");
    FAIL() << "accepted 16.8 M flows in 4 GB";
  } catch (const ScenarioError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("parallel.ep: simulating it needs at least 8.09 GB (16773120 flows in flight "
                     "at once, 4096 ranks · 4095 peers"),
              std::string::npos)
        << m;
    EXPECT_NE(m.find("network_model: analytical"), std::string::npos) << m;
  }
  EXPECT_NO_THROW(check_memory_budget(sc, 4'000'000'000, "--max-memory 4GB", false, "analytical"));
}

// The largest counts the limits allow: 262,144 ranks · 1,000 iterations · 65,536 micro-batches ·
// 2 · 10,002 layers = 3.44e17 ops fit in 64 bits, but their 150 bytes each (5.2e19) do not: the
// bytes saturate instead of wrapping (UBSan would stop a wrap), and the run is still refused.
TEST(SizeEstimate, TheLargestCountsSaturateTheBytesInsteadOfWrapping) {
  EXPECT_THROW(
      load_scenario(kLlama, {"cluster.nodes=32768", "simulation.iterations=1000",
                             "training.global_batch=17179869184", "model.num_layers=10000"}),
      ScenarioError);
}

TEST(SizeEstimate, TheDefaultBudgetIsHalfTheMachine) {
  // /proc/meminfo's MemTotal is in KiB; sysconf rounds to whole pages, so allow a page.
  std::ifstream meminfo("/proc/meminfo");
  std::string key;
  std::int64_t kib = 0;
  meminfo >> key >> kib;
  ASSERT_EQ(key, "MemTotal:");
  EXPECT_NEAR(static_cast<double>(default_memory_budget()), kib * 1024.0 / 2, 4096.0);
}

}  // namespace
}  // namespace clustersim::models
