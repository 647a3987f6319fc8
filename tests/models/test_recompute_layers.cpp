// Megatron-LM's partial full recompute, training.recompute_method / recompute_num_layers
// (docs/memory.md "Recompute"; models/plans/recompute_layers.hpp): block re-runs the first N
// blocks of each pipeline chunk and keeps every activation of the others; uniform re-runs every
// block in groups of N consecutive ones, each group keeping its input only.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "models/memory_suggestions.hpp"
#include "models/plan_estimate.hpp"
#include "models/plan_search.hpp"
#include "models/run_scenario.hpp"
#include "models/scenario.hpp"
#include "tests/models/scenario_error_check.hpp"

namespace clustersim::models {
namespace {

// --- Bad input ---

// Lines 1-7, then `extra` (lines 8 on), then the parallel section.
std::string scenario(const std::string& recompute, const std::string& extra,
                     const std::string& parallel = "{tp: 2, pp: 2}") {
  return "name: t\n"                                                                      // 1
         "cluster: {nodes: 1, node: dgx-a100}\n"                                          // 2
         "model: {num_layers: 8, hidden_size: 1024, num_heads: 16, vocab_size: 32768}\n"  // 3
         "training:\n"                                                                    // 4
         "  global_batch: 16\n"                                                           // 5
         "  seq_len: 512\n"                                                               // 6
         "  recompute: " +
         recompute + "\n" + extra + "parallel: " + parallel + "\n";
}

TEST(RecomputeLayers, ZeroLayersIsRejected) {
  expect_error(scenario("full", "  recompute_method: block\n  recompute_num_layers: 0\n"),
               "bad.yaml:9", "training.recompute_num_layers", "out of range");
}

// 8 blocks over pp 2: 4 per chunk; with 2 virtual stages each, 2 per chunk.
TEST(RecomputeLayers, MoreLayersThanAChunkHoldsIsRejected) {
  expect_error(scenario("full", "  recompute_method: block\n  recompute_num_layers: 5\n"),
               "bad.yaml:9", "training.recompute_num_layers", "exceeds the 4 blocks");
  expect_error(scenario("full", "  recompute_method: uniform\n  recompute_num_layers: 3\n",
                        "{tp: 2, pp: 2, schedule: interleaved, virtual_stages: 2}"),
               "bad.yaml:9", "training.recompute_num_layers", "exceeds the 2 blocks");
}

TEST(RecomputeLayers, MethodNeedsFullRecompute) {
  expect_error(scenario("selective", "  recompute_method: block\n  recompute_num_layers: 1\n"),
               "bad.yaml:8", "training.recompute_method", "allowed: recompute: full");
  expect_error(scenario("none", "  recompute_num_layers: 2\n"), "bad.yaml:8",
               "training.recompute_num_layers", "training.recompute is none");
}

TEST(RecomputeLayers, UnknownMethodIsRejected) {
  expect_error(scenario("full", "  recompute_method: blocks\n  recompute_num_layers: 1\n"),
               "bad.yaml:8", "training.recompute_method", "uniform");
}

TEST(RecomputeLayers, BothKeysAreNeeded) {
  expect_error(scenario("full", "  recompute_method: block\n"), "bad.yaml:8",
               "training.recompute_method", "give training.recompute_num_layers too");
  expect_error(scenario("full", "  recompute_num_layers: 2\n"), "bad.yaml:8",
               "training.recompute_num_layers", "give training.recompute_method too");
}

TEST(RecomputeLayers, OverridesSetTheKeys) {
  const Scenario s =
      parse_scenario(scenario("full", ""), "ok.yaml",
                     {"training.recompute_method=block", "training.recompute_num_layers=3"});
  EXPECT_EQ(s.training.recompute_method, RecomputeMethod::block);
  EXPECT_EQ(s.training.recompute_num_layers, 3);
}

// --- Compute ---

// The GPT shape of test_tensor_parallel.cpp: l = 8 blocks, h = 1024, s = 512, B = 16 samples
// per iteration; a block's forward is 24·B·s·h²·(1 + s/6h) FLOPs per iteration (Narayanan et al.
// 2021, Eq. 3), which is what full recompute re-spends per block. With pp 2 a chunk holds 4.
constexpr double kL = 8, kH = 1024, kS = 512, kBatch = 16;
constexpr double kBlockForward = 24 * kBatch * kS * kH * kH * (1 + kS / (6 * kH));

struct Recomputed {
  double flops = 0;   // every rank's recompute ops, per iteration
  double time_s = 0;  // the breakdown's recompute time
};

Recomputed recompute_of(const std::string& extra, const std::string& parallel = "{tp: 2, pp: 2}") {
  const auto run =
      run_scenario(parse_scenario(scenario("full", "  micro_batch: 2\n  precision: bf16\n" + extra,
                                           parallel + "\nsimulation: {network_model: ideal}"),
                                  "test"));
  Recomputed r;
  for (const auto& op : run.built.schedule.ops)
    if (op.category == engine::Category::recompute) r.flops += run.built.schedule.flops(op);
  r.flops *= run.built.folded_replicas;
  r.time_s = run.result.breakdown_s.recompute;
  return r;
}

// `full` alone re-runs all 8 blocks: the closed form tests/models/test_tensor_parallel.cpp
// asserts (96 − 72 = 24 per block), unchanged by the new keys.
TEST(RecomputeLayers, FullWithoutTheKeysRecomputesEveryBlock) {
  EXPECT_NEAR(recompute_of("").flops, kL * kBlockForward, 1e-9 * kL * kBlockForward);
  // uniform, 1 is what `full` alone means; uniform, 4 re-runs every block as well.
  for (const char* n : {"1", "4"}) {
    const auto r = recompute_of(
        "  recompute_method: uniform\n  recompute_num_layers: " + std::string(n) + "\n");
    EXPECT_NEAR(r.flops, kL * kBlockForward, 1e-9 * kL * kBlockForward) << "uniform " << n;
  }
}

// block, N: N blocks of each of the pp · v chunks, so N·pp·v / l of the full recompute's FLOPs;
// each rank's recompute time is N/4 of full's (its chunk's blocks are alike).
TEST(RecomputeLayers, BlockRecomputesNLayersOfEachChunk) {
  const Recomputed full = recompute_of("");
  for (int n : {1, 3}) {
    SCOPED_TRACE("N = " + std::to_string(n));
    const auto r = recompute_of(
        "  recompute_method: block\n  recompute_num_layers: " + std::to_string(n) + "\n");
    const double expected = n * 2 * kBlockForward;  // pp = 2 chunks
    EXPECT_NEAR(r.flops, expected, 1e-9 * expected);
    EXPECT_NEAR(r.time_s, full.time_s * n / 4, 1e-9 * full.time_s);
  }
  // Interleaved, v = 2: four chunks of 2 blocks, N = 1 of each: 4 of the 8.
  const auto r = recompute_of("  recompute_method: block\n  recompute_num_layers: 1\n",
                              "{tp: 2, pp: 2, schedule: interleaved, virtual_stages: 2}");
  EXPECT_NEAR(r.flops, 4 * kBlockForward, 1e-9 * 4 * kBlockForward);
}

// The plan search's closed-form estimate re-spends the forward of the same blocks: N of a
// chunk's 4 under block, so N/4 of full's recompute time, and one extra forward pair of TP
// all-reduces per recomputed block (4 per block and micro-batch, 6 for a recomputed one).
// (Every TP collective counted exposed: tp_async_grad_reduce stated off.)
TEST(RecomputeLayers, PlanEstimateRecomputesNBlocksPerChunk) {
  auto estimate = [](const std::string& extra, const char* async = "false") {
    const Scenario s =
        parse_scenario(scenario("full", "  micro_batch: 2\n" + extra,
                                std::string("{tp: 2, pp: 2, tp_async_grad_reduce: ") + async + "}"),
                       "test");
    return estimate_plan(s, plan_model_figures(s));
  };
  const PlanEstimate full = estimate("");
  const PlanEstimate one = estimate("  recompute_method: block\n  recompute_num_layers: 1\n");
  const PlanEstimate three = estimate("  recompute_method: block\n  recompute_num_layers: 3\n");
  ASSERT_GT(full.recompute_s, 0);
  EXPECT_NEAR(one.recompute_s, full.recompute_s / 4, 1e-12 * full.recompute_s);
  EXPECT_NEAR(three.recompute_s, full.recompute_s * 3 / 4, 1e-12 * full.recompute_s);
  // TP time: 4·4 + 2·N all-reduces per micro-batch against full's 4·4 + 2·4.
  EXPECT_NEAR(one.tp_s / full.tp_s, 18.0 / 24.0, 1e-12);
  // Megatron's asynchronous backward reductions hide behind the weight gradients: less exposed.
  EXPECT_LT(estimate("", "true").tp_s, full.tp_s);
}

// --- Memory ---

// test_memory.cpp's GPT-3 175B shape cut to 8 layers (h = 12288, a = 96, s = 2048, b = 2,
// V = 51200, standard attention), tp 1, pp 2 with 1F1B and m = 4: stage 0 holds 2 micro-batches
// at its backward of micro-batch 0, stage 1 one; 4 blocks per stage. Korthikanti et al. 2022:
// a block keeps s·b·h·(34 + 5·a·s/h) = 114·s·b·h without recompute (5·96·2048/12288 = 80), its
// input 2·s·b·h (16-bit) when checkpointed. Outside the blocks: the embedding's dropout mask
// s·b·h, the head 4·s·b·h + 4·s·b·V (models/model_costs.cpp; test_memory.cpp).
constexpr double kSg = 2048, kB = 2, kHg = 12288, kA = 96, kVg = 51200;
constexpr double kSbh = kSg * kB * kHg;
constexpr double kBlock = kSbh * (34 + 5 * kA * kSg / kHg);  // 114·s·b·h
constexpr double kInput = 2 * kSbh;
constexpr double kEmbedding = kSbh;
constexpr double kHead = 4 * kSbh + 4 * kSg * kB * kVg;

MemoryEstimate gpt3_memory(const std::string& method, int n) {
  const std::string text =
      "name: gpt3-8-layers\n"
      "cluster: {nodes: 1, node: dgx-a100}\n"
      "model: {preset: gpt3-175b, num_layers: 8}\n"
      "training: {global_batch: 32, micro_batch: 2, seq_len: 2048, precision: bf16,\n"
      "           attention: standard, recompute: full, recompute_method: " +
      method + ", recompute_num_layers: " + std::to_string(n) +
      "}\n"
      "parallel: {tp: 1, pp: 2, schedule: 1f1b}\n"
      "simulation: {network_model: ideal}\n";
  return run_scenario(parse_scenario(text, "test")).result.memory;
}

// block, N = 1: per stage one block keeps 2·s·b·h, three keep 114·s·b·h:
//   stage 0: 2 · (2 + 3·114 + 1)·s·b·h = 690·s·b·h;  stage 1: 1 · (2 + 3·114 + 4)·s·b·h + 4·s·b·V.
// N = 3: stage 0: 2 · (3·2 + 114 + 1)·s·b·h = 242·s·b·h.
TEST(RecomputeLayers, BlockKeepsTheInputOfNBlocksAndEverythingOfTheRest) {
  for (int n : {1, 3}) {
    SCOPED_TRACE("N = " + std::to_string(n));
    const auto est = gpt3_memory("block", n);
    const double per_stage = n * kInput + (4 - n) * kBlock;
    const double stage0 = 2 * (per_stage + kEmbedding);
    const double stage1 = 1 * (per_stage + kHead);
    EXPECT_NEAR(est.per_stage_saved_activations[0], stage0, 1e-9 * stage0);
    EXPECT_NEAR(est.per_stage_saved_activations[1], stage1, 1e-9 * stage1);
  }
  EXPECT_NEAR(gpt3_memory("block", 1).per_stage_saved_activations[0], 690 * kSbh, 1e-9 * kSbh);
  EXPECT_NEAR(gpt3_memory("block", 3).per_stage_saved_activations[0], 242 * kSbh, 1e-9 * kSbh);
}

// uniform, N = 2: two groups per stage, each keeping its input only:
//   stage 0: 2 · (2·2 + 1)·s·b·h = 10·s·b·h;  stage 1: (2·2 + 4)·s·b·h + 4·s·b·V.
// In stage 0's first backward (1F1B: F0 F1 B0) the last group is recomputed whole before its
// backward: its two blocks' 2·114·s·b·h come on top of the 10·s·b·h saved, less the group's own
// input (2·s·b·h) they replace: 236·s·b·h. The stage's peak is in that group's last attention
// backward: the last block's MLP half (Korthikanti's 19·s·b·h and its layer norm's 2·s·b·h) is
// freed, the attention backward holds two score-sized gradients, 2 · 2·a·s²·b bytes = 64·s·b·h
// (4·a·s/h = 64): 236 − 21 + 64 = 279·s·b·h. With uniform, 1 (`full` alone) one block at a time:
// 2·(4·2 + 1) + 114 − 2 − 21 + 64 = 173·s·b·h. The difference, 106·s·b·h, is the group's second
// block recomputed at once (114) less the two inputs each of the 2 micro-batches no longer keeps
// (2 · 2 · 2).
TEST(RecomputeLayers, UniformKeepsOneInputPerGroupAndRecomputesAGroupAtOnce) {
  const auto est = gpt3_memory("uniform", 2);
  const double stage0 = 2 * (2 * kInput + kEmbedding);
  const double stage1 = 1 * (2 * kInput + kHead);
  EXPECT_NEAR(est.per_stage_saved_activations[0], stage0, 1e-9 * stage0);
  EXPECT_NEAR(est.per_stage_saved_activations[1], stage1, 1e-9 * stage1);
  const double mlp_half = 21 * kSbh;
  const double scores = 2 * 2 * kA * kSg * kSg * kB;
  const double peak = stage0 + 2 * kBlock - kInput - mlp_half + scores;
  EXPECT_NEAR(peak, 279 * kSbh, 1e-9 * kSbh);
  EXPECT_NEAR(est.per_stage[0].activations, peak, 1e-9 * peak);
  const auto one = gpt3_memory("uniform", 1);
  const double one_peak = 2 * (4 * kInput + kEmbedding) + kBlock - kInput - mlp_half + scores;
  EXPECT_NEAR(one_peak, 173 * kSbh, 1e-9 * kSbh);
  EXPECT_NEAR(one.per_stage[0].activations, one_peak, 1e-9 * one_peak);
}

// A layer list (8 layers of 4 GB of activations per sample, micro-batch 1, pp 1): full
// recompute keeps nothing of a recomputed layer, and its backward brings the layer's 4 GB
// back: the peak holds one layer's 4 GB under uniform, 1, a group's 8 GB under uniform, 2;
// block, 2 keeps the other 6 layers' 24 GB, the most at the first backward.
MemoryEstimate list_memory(const std::string& keys) {
  const std::string text =
      "name: list\n"
      "cluster: {nodes: 1, node: dgx-a100}\n"
      "model:\n"
      "  layers: [{name: block, params: 1e6, forward_flops: 1e12, activation_bytes: 4GB, "
      "repeat: 8}]\n"
      "training: {global_batch: 8, micro_batch: 1, precision: bf16, recompute: full" +
      keys + "}\n";
  return estimate_memory_only(parse_scenario(text, "list.yaml"));
}

TEST(RecomputeLayers, LayerListBringsTheRecomputedGroupBack) {
  EXPECT_NEAR(list_memory("").peak.activations, 4e9, 1.0);
  EXPECT_NEAR(list_memory(", recompute_method: uniform, recompute_num_layers: 2").peak.activations,
              8e9, 1.0);
  const auto block = list_memory(", recompute_method: block, recompute_num_layers: 2");
  EXPECT_NEAR(block.per_stage_saved_activations[0], 24e9, 1.0);
  EXPECT_NEAR(block.peak.activations, 24e9, 1.0);
}

// --- Memory suggestions ---

// The same GPT-3 shape at tp 8 (no sequence parallelism), pp 1, one micro-batch of b = 16:
// 8 blocks in one chunk, a block keeps s·b·h·(10 + 24/8 + 5·a·s/(h·8)) = 23·s·b·h, a checkpointed
// one 2·s·b·h. Recomputing 1 block does not fit an 80 GB A100; the suggestion doubles N, 2 does
// not fit either, 4 does: three more blocks keep their input only, 3 · (23 − 2)·s·b·h less at
// the same peak (the LM head's backward, all blocks' activations still held).
TEST(RecomputeLayers, SuggestionRecomputesMoreBlocks) {
  const std::string text =
      "name: sg\n"
      "cluster: {nodes: 1, node: dgx-a100}\n"
      "model: {preset: gpt3-175b, num_layers: 8}\n"
      "training: {global_batch: 16, micro_batch: 16, seq_len: 2048, precision: bf16,\n"
      "           attention: standard, recompute: full, recompute_method: block,\n"
      "           recompute_num_layers: 1}\n"
      "parallel: {tp: 8, pp: 1}\n"
      "simulation: {network_model: ideal}\n";
  const Scenario sc = parse_scenario(text, "test");
  const MemoryEstimate base = estimate_memory_only(sc);
  EXPECT_FALSE(base.fits());
  const auto suggestions = memory_suggestions(sc);
  ASSERT_FALSE(suggestions.empty());
  EXPECT_EQ(suggestions.front().change, "training.recompute_num_layers=4");
  EXPECT_TRUE(suggestions.front().fits);
  const double sbh = kSg * 16 * kHg;
  EXPECT_NEAR(base.total() - suggestions.front().peak_bytes, 3 * (23 - 2) * sbh, 1.0);
}

// The plan search enumerates none, selective and full of every block: a base that recomputes
// 2 blocks per chunk yields no plan the rules refuse (its keys would not fit a `none` plan or a
// deeper pipeline), and a full plan states uniform, 1 in its flags, so the base with them
// loads as that plan.
TEST(RecomputeLayers, PlanSearchDropsTheBasesPartialRecompute) {
  const std::string text =
      "name: search\n"
      "cluster: {nodes: 1, node: pcie-8gpu}\n"
      "model: {num_layers: 24, hidden_size: 2048, num_heads: 32, vocab_size: 50304}\n"
      "training: {global_batch: 64, seq_len: 1024, recompute: full, recompute_method: block,\n"
      "           recompute_num_layers: 2}\n";
  PlanSearchOptions options;
  options.top = 1000;
  options.resimulate = 0;
  const PlanSearchResult r = search_plans(parse_scenario(text, "search.yaml"), options);
  EXPECT_EQ(r.invalid, 0u);
  int full = 0;
  for (const PlanCandidate& c : r.top) {
    if (c.scenario.training.recompute != Recompute::full) continue;
    ++full;
    const Scenario again = parse_scenario(text, "search.yaml", plan_overrides(c.scenario));
    EXPECT_EQ(again.training.recompute_method, RecomputeMethod::uniform);
    EXPECT_EQ(again.training.recompute_num_layers, 1);
  }
  EXPECT_GT(full, 0);
  // The best plan written as a file loads as itself, whichever recompute it chose.
  const auto dir =
      std::filesystem::temp_directory_path() /
      ("clustersim-recompute-" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()));
  std::filesystem::create_directories(dir);
  const std::string source = (dir / "search.yaml").string();
  std::ofstream(source) << text;
  for (const bool full_plan : {false, true}) {
    const auto it = std::find_if(r.top.begin(), r.top.end(), [&](const PlanCandidate& c) {
      return (c.scenario.training.recompute == Recompute::full) == full_plan;
    });
    ASSERT_NE(it, r.top.end());
    const std::string out = (dir / (full_plan ? "full.yaml" : "other.yaml")).string();
    write_plan_scenario(it->scenario, source, out);
    const Scenario planned = load_scenario(out);
    EXPECT_EQ(planned.training.recompute, it->scenario.training.recompute);
    EXPECT_EQ(planned.training.recompute_num_layers, 1);
  }
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace clustersim::models
