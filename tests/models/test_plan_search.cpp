// Plan search (models/plan_search.hpp) on cases whose best plan is known by hand, the pipeline
// bubble against its closed form, the decision tree, and the best plan re-run as a scenario.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "models/frontend.hpp"
#include "models/memory_model.hpp"
#include "models/plan_search.hpp"

namespace clustersim::models {
namespace {

// A 1.3 B-parameter GPT (32 heads, so every tp up to 8 is allowed) on one PCIe server.
const std::string kSmallOnPcie = R"(name: gpt-1b3-pcie
cluster: {nodes: 1, node: pcie-8gpu}
model: {num_layers: 24, hidden_size: 2048, num_heads: 32, num_kv_heads: 32, ffn_hidden_size: 8192,
        vocab_size: 50304}
training: {global_batch: 64, micro_batch: 1, seq_len: 1024, precision: bf16, optimizer: adam}
)";

// Llama 2 70B on two DGX H100.
const std::string kSeventyBOnTwoNodes = R"(name: llama2-70b-2-nodes
cluster: {nodes: 2, node: dgx-h100, network: {topology: fat-tree, nic_bandwidth: 400Gb/s, nics_per_node: 8}}
model: llama2-70b
training: {global_batch: 16, micro_batch: 1, seq_len: 4096, precision: bf16, optimizer: adam}
)";

// The search's best `top` plans by the analytical estimate alone (no flow re-simulation).
PlanSearchResult estimated_plans(const std::string& text, const std::string& name, int top) {
  PlanSearchOptions options;
  options.top = top;
  options.resimulate = 0;
  return search_plans(parse_scenario(text, name), options);
}

TEST(PlanSearch, SmallModelOnPcieServerPrefersDataParallelOverTensorParallel) {
  // 1.3 B parameters x 16 B fit in an L40S's 48 GB; TP would all-reduce every layer's
  // activations over PCIe and the CPUs' link, DP all-reduces the gradients once, behind backward.
  const PlanSearchResult r = estimated_plans(kSmallOnPcie, "small.yaml", 3);
  ASSERT_FALSE(r.top.empty());
  const ParallelConfig& best = r.top.front().scenario.parallel;
  EXPECT_EQ(best.tp, 1);
  EXPECT_EQ(best.pp, 1);
  EXPECT_EQ(best.dp, 8);
  EXPECT_EQ(r.rule.parallel.data_parallel, DataParallel::ddp);  // the rule says so too
}

TEST(PlanSearch, SeventyBillionOnTwoNodesKeepsTensorParallelInsideTheNode) {
  const PlanSearchResult r = estimated_plans(kSeventyBOnTwoNodes, "70b.yaml", 2);
  ASSERT_FALSE(r.top.empty());
  // Every listed plan fits and keeps TP at the node's 8 NVLink-connected GPUs.
  for (const PlanCandidate& c : r.top) {
    EXPECT_EQ(c.scenario.parallel.tp, 8) << describe_plan(c.scenario);
    EXPECT_LE(c.memory_bytes, c.capacity_bytes);
  }
  EXPECT_GT(r.does_not_fit + r.invalid, 0u);  // the memory model pruned something
}

// A plan that fits only without the allocator's fragmentation allowance is what `run` calls
// tight: the search lists it (it may well run) and marks it. Llama 2 70B on two DGX H100 with a
// batch of 16: its best estimates (tp 8, pp 2, DDP) hold 76-78 GiB of 80, inside the allowance.
TEST(PlanSearch, PlansThatFitOnlyWithoutTheFragmentationAllowanceAreMarkedTight) {
  const PlanSearchResult r = estimated_plans(kSeventyBOnTwoNodes, "70b.yaml", 3);
  ASSERT_FALSE(r.top.empty());
  int tight = 0;
  for (const PlanCandidate& c : r.top) {
    const MemoryEstimate m = estimate_memory_only(c.scenario);
    const bool within_allowance = m.total() + m.overheads.fragmentation <= m.capacity;
    EXPECT_EQ(c.tight, !within_allowance) << describe_plan(c.scenario);
    EXPECT_LE(c.memory_bytes, c.capacity_bytes);
    tight += c.tight;
  }
  EXPECT_GT(tight, 0);
}

TEST(PlanEstimate, PipelineBubbleFollowsItsClosedForm) {
  // 1F1B without interleaving idles (p - 1) micro-batch slots of m + p - 1: with p = 4 and
  // m = 64 / (1 x 2) = 32, the bubble is 3 / 35 of the pipeline's time.
  Scenario s = parse_scenario(kSmallOnPcie, "small.yaml",
                              {"parallel.tp=1", "parallel.pp=4", "parallel.dp=2"});
  const PlanEstimate e = estimate_plan(s, plan_model_figures(s));
  const double pipeline = e.compute_s + e.recompute_s + e.tp_s + e.pp_s + e.ep_s + e.bubble_s;
  EXPECT_NEAR(e.bubble_s / pipeline, 3.0 / 35.0, 1e-9);
}

TEST(RuleOfThumb, FollowsTheTutorialsTree) {
  const Scenario small = parse_scenario(kSmallOnPcie, "small.yaml");
  EXPECT_EQ(rule_of_thumb(small, 8).parallel.data_parallel, DataParallel::ddp);
  // 70 B x 16 B = 1.1 TB: not on one GPU; sharded over 16 GPUs, 70 GB each fit in 80 GB and a
  // layer (0.86 B x 16 B = 14 GB) is small -> FSDP.
  const Scenario big = parse_scenario(kSeventyBOnTwoNodes, "70b.yaml");
  EXPECT_EQ(rule_of_thumb(big, 16).parallel.data_parallel, DataParallel::fsdp);
  // On 8 GPUs the shards (140 GB) do not fit: TP inside the node, then PP.
  const RuleOfThumb eight = rule_of_thumb(big, 8);
  EXPECT_EQ(eight.parallel.tp, 8);
  // Mixtral's 8 experts over 32 data-parallel GPUs: EP 8 on top of FSDP.
  const Scenario moe =
      load_scenario(std::string(CLUSTERSIM_SCENARIOS_DIR) + "/mixtral-8x7b-ep8-dgx-h100.yaml");
  const RuleOfThumb experts = rule_of_thumb(moe, 32);
  EXPECT_EQ(experts.parallel.data_parallel, DataParallel::fsdp);
  EXPECT_EQ(experts.parallel.ep, 8);
}

TEST(PlanSearch, EveryListedPlanRerunAsScenarioReproducesItsFlowFigures) {
  const auto dir = std::filesystem::temp_directory_path() / "clustersim-test-plan-search";
  std::filesystem::create_directories(dir);
  const std::string source = (dir / "small.yaml").string();
  std::ofstream(source) << kSmallOnPcie;
  PlanSearchOptions options;
  options.top = 3;
  options.resimulate = 3;
  const PlanSearchResult r = search_plans(load_scenario(source), options);
  ASSERT_EQ(r.top.size(), 3u);
  for (std::size_t i = 0; i < r.top.size(); ++i) {
    const PlanCandidate& c = r.top[i];
    ASSERT_TRUE(c.simulated);
    // As the user would: the printed --set flags on the original file (which also shows each
    // plan passes the scenario rules), and the plan written as a scenario of its own.
    RunRequest request;
    request.scenario = source;
    request.overrides = plan_overrides(c.scenario);
    const Result flags = predict(request).output.result;
    EXPECT_EQ(flags.iteration_time_s, c.simulated->iteration_time_s) << describe_plan(c.scenario);
    EXPECT_EQ(flags.mfu, c.simulated->mfu);
    EXPECT_EQ(flags.memory.total(), c.memory_bytes);
    const std::string written = (dir / ("plan" + std::to_string(i) + ".yaml")).string();
    write_plan_scenario(c.scenario, source, written);
    RunRequest rerun;
    rerun.scenario = written;
    EXPECT_EQ(predict(rerun).output.result.iteration_time_s, c.simulated->iteration_time_s);
  }
  // Best first by the flow model's figure, which ordered the re-simulated plans.
  EXPECT_LE(r.top[0].simulated->iteration_time_s, r.top[1].simulated->iteration_time_s);
  EXPECT_LE(r.top[1].simulated->iteration_time_s, r.top[2].simulated->iteration_time_s);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace clustersim::models
