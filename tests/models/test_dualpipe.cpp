// DualPipe (DeepSeek-V3 technical report §3.2.1, Table 2; deepseek-ai/DualPipe): the order of
// passes on each rank against the published step list, every (micro-batch, chunk, pass) once, the
// bubble and the activations in flight against Table 2's closed forms with F = B = W, the two
// parameter copies, their gradient sum, and the plans it does not model (docs/dualpipe.md).
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "models/memory_model.hpp"
#include "models/plans/pipeline_order.hpp"
#include "models/plans/training_schedule.hpp"
#include "models/run_scenario.hpp"
#include "models/scenario.hpp"
#include "tests/models/pipeline_scenarios.hpp"

namespace clustersim::models {
namespace {

// p ranks, one GPU each, 24 identical layers of `params` parameters (pipeline_scenarios.hpp):
// F = B = W = 10 us per layer; each layer saves 1 MB per sample (bf16, micro_batch 1).
std::string dualpipe_uniform(const std::string& schedule, int p, int m,
                             const std::string& params = "1", const std::string& parallel = "") {
  return uniform_pipeline_scenario(schedule, p, m, 1, params, ", activation_bytes: 1MB", parallel);
}
// Table 2 counts every transfer as hidden: the most overlap (`pp_p2p_overlap: full`). DualPipe's
// own calls stall a W at the start (test_dualpipe_calls.cpp).
constexpr const char* kHidden = ", pp_p2p_overlap: full";

std::string steps_text(const std::vector<PipelineStep>& steps) {
  std::string t;
  for (const auto& s : steps)
    t += std::string(s.forward ? "F" : s.weight ? "W" : "B") + std::to_string(s.microbatch) + " ";
  return t;
}

// Each rank runs every micro-batch once forward, once B, once W, in that order, in the chunk of
// its direction (micro-batches 0 .. m/2 − 1 enter at rank 0 and run chunk 0, the others enter at
// rank p − 1 and run chunk 1); the passes of one direction and kind run in micro-batch order on
// every rank, which is what pairs the n-th send of a stream with its peer's n-th receive.
TEST(DualPipe, EveryRankRunsEachMicroBatchOnceInItsDirection) {
  for (int p : {2, 4, 8})
    for (int m : {2 * p, 2 * p + 2, 4 * p})
      for (int rank = 0; rank < p; ++rank) {
        SCOPED_TRACE("p=" + std::to_string(p) + " m=" + std::to_string(m) +
                     " rank=" + std::to_string(rank));
        std::vector<int> pass(static_cast<std::size_t>(m), 0);  // 1 after F, 2 after B, 3 after W
        int last[2][2] = {{-1, -1}, {-1, -1}};                  // [direction][forward]
        for (const auto& s : dualpipe_order(rank, p, m)) {
          const int direction = s.microbatch < m / 2 ? 0 : 1;
          EXPECT_EQ(s.chunk, direction) << "mb " << s.microbatch;
          const int want = s.forward ? 0 : (s.weight ? 2 : 1);
          EXPECT_EQ(pass[static_cast<std::size_t>(s.microbatch)], want) << "mb " << s.microbatch;
          pass[static_cast<std::size_t>(s.microbatch)] = want + 1;
          if (!s.weight) {
            int& previous = last[direction][s.forward ? 1 : 0];
            EXPECT_GT(s.microbatch, previous);
            previous = s.microbatch;
          }
        }
        EXPECT_EQ(pass, std::vector<int>(static_cast<std::size_t>(m), 3));
      }
}

// The step list of deepseek-ai/DualPipe for p = 4 ranks and m = 8 micro-batches (0-3 enter at
// rank 0, 4-7 at rank 3), written out by hand from its eight phases. Rank 0 (h = 0, its near
// direction the forward one): 2 near forwards (F0 F1); one near and one far forward (F2 F4); a far
// B with W deferred, that W, a far forward (B4 W4 F5); one steady round of two F&B pairs,
// (F3, B5 W5) and (F6, B0 W0); a far full backward and a pair (B6 W6, F7 B1 W1); the cool-down
// round B7 W7, then B2 with W deferred (h even: the switch falls between the two); W2 and B3
// deferred; W3. Rank 1 (h = 1): two rounds of near and far forwards, two steady rounds, two
// cool-down rounds (the second's Bs deferred: h odd switches before the far B), two Ws.
TEST(DualPipe, RankOrderFollowsThePublishedStepList) {
  EXPECT_EQ(steps_text(dualpipe_order(0, 4, 8)),
            "F0 F1 F2 F4 B4 W4 F5 F3 B5 W5 F6 B0 W0 B6 W6 F7 B1 W1 B7 W7 B2 W2 B3 W3 ");
  EXPECT_EQ(steps_text(dualpipe_order(1, 4, 8)),
            "F0 F4 F1 F5 F2 B4 W4 F6 B0 W0 F3 B5 W5 F7 B1 W1 B6 W6 B2 W2 B7 B3 W7 W3 ");
  // The second half mirrors the first with the directions swapped: rank 3 starts with the
  // micro-batches that enter at its end.
  EXPECT_EQ(steps_text(dualpipe_order(3, 4, 8)),
            "F4 F5 F6 F0 B0 W0 F1 F7 B1 W1 F2 B4 W4 B2 W2 F3 B5 W5 B3 W3 B6 W6 B7 W7 ");
}

// Table 2's activation column: p + 1 micro-batches' worth of one stage on each rank (the chunk a
// micro-batch runs on a rank is one stage: 24/p layers of 1 MB). Counted from F to W (W reads the
// saved inputs): rank 0 of p = 4 above peaks after F3 with F0 F1 F2 F4 F5 F3 held (W4 ran), 5.
// 1F1B's stage 0 holds p.
TEST(DualPipe, HoldsPPlusOneMicroBatchesOnEveryRank) {
  for (int p : {2, 4, 8, 16})
    for (int m : {2 * p, 4 * p})
      for (int rank = 0; rank < p; ++rank)
        EXPECT_EQ(peak_in_flight(dualpipe_order(rank, p, m)), p + 1)
            << "p=" << p << " m=" << m << " rank=" << rank;
  for (int p : {4, 8}) {
    SCOPED_TRACE("p=" + std::to_string(p));
    const double stage_mb = 24.0 / p * 1e6;
    const MemoryEstimate dual =
        estimate_memory_only(parse_scenario(dualpipe_uniform("dualpipe", p, 4 * p), "test"));
    ASSERT_EQ(dual.per_stage_saved_activations.size(), static_cast<std::size_t>(p));
    for (double held : dual.per_stage_saved_activations)
      EXPECT_NEAR(held, (p + 1) * stage_mb, 1.0);
    const MemoryEstimate one =
        estimate_memory_only(parse_scenario(dualpipe_uniform("1f1b", p, 4 * p), "test"));
    EXPECT_NEAR(one.per_stage_saved_activations[0], p * stage_mb, 1.0);
  }
}

// Table 2's parameter column: each rank holds two stages (stage s and stage p − 1 − s), twice a
// one-direction pipeline's. bf16 without autocast: 2 bytes of weights and 12 of Adam state per
// parameter, 24/p layers of 1e6 parameters per stage.
TEST(DualPipe, ParametersAreTwiceOneDirection) {
  for (int p : {2, 4}) {
    SCOPED_TRACE("p=" + std::to_string(p));
    const double stage_params = 24.0 / p * 1e6;
    const MemoryEstimate dual =
        estimate_memory_only(parse_scenario(dualpipe_uniform("dualpipe", p, 2 * p, "1e6"), "test"));
    const MemoryEstimate one =
        estimate_memory_only(parse_scenario(dualpipe_uniform("1f1b", p, 2 * p, "1e6"), "test"));
    for (int s = 0; s < p; ++s) {
      EXPECT_NEAR(dual.per_stage[static_cast<std::size_t>(s)].weights, 2 * 2 * stage_params, 1);
      EXPECT_NEAR(dual.per_stage[static_cast<std::size_t>(s)].optimizer, 2 * 12 * stage_params, 1);
      EXPECT_NEAR(one.per_stage[static_cast<std::size_t>(s)].weights, 2 * stage_params, 1);
    }
  }
}

// With F = B = W = T (T = 24/p layers × 10 us), the published order on one compute stream per
// rank. In this model the F&B pair is the forward of one micro-batch, then the full backward of
// the other (B, then its W at once) on the same stream, F&B = F + B + W = 3T: the GPU computes
// one thing at a time, and what the pair overlaps is communication (the sends and receives on
// their own streams). The hand timeline of p = 4, m = 8 (one column per T, "." idle):
//   rank 0: F0 F1 F2 F4 B4 W4 F5 F3 B5 W5 F6 B0 W0 B6 W6 F7 B1 W1 B7 W7 B2 W2 .  B3 W3
//   rank 1: .  F0 F4 F1 F5 F2 B4 W4 F6 B0 W0 F3 B5 W5 F7 B1 W1 B6 W6 B2 W2 B7 B3 W7 W3
//   rank 2: .  F4 F0 F5 F1 F6 B0 W0 F2 B4 W4 F7 B1 W1 F3 B5 W5 B2 W2 B6 W6 B3 B7 W3 W7
//   rank 3: F4 F5 F6 F0 B0 W0 F1 F7 B1 W1 F2 B4 W4 B2 W2 F3 B5 W5 B3 W3 B6 W6 .  B7 W7
// (rank 1's F0 waits for rank 0's; rank 0's B3 for rank 1's, which follows B7 there): every
// rank idles T in 3m·T + T. Table 2's (p/2 − 1)(F&B + B − 3W), with B the input-gradient pass:
// (p/2 − 1)(3T + T − 3T) = (p/2 − 1)·T, so the iteration is (3m + p/2 − 1)·T, against ZB-H1's
// (3m + p − 1)·T and 1F1B's 3(m + p − 1)·T on the same p ranks.
TEST(DualPipe, BubbleIsHalfPMinusOnePassesWithEqualPasses) {
  for (int p : {4, 8})
    for (int m : {2 * p, 4 * p}) {
      SCOPED_TRACE("p=" + std::to_string(p) + " m=" + std::to_string(m));
      const double T = 24.0 / p * 10e-6;
      const double idle = (p / 2 - 1) * T;
      const Result r =
          run_scenario(parse_scenario(dualpipe_uniform("dualpipe", p, m, "1", kHidden), "test"))
              .result;
      EXPECT_NEAR(r.iteration_time_s, 3 * m * T + idle, 2e-5 * T);
      EXPECT_NEAR(r.breakdown_s.idle, idle, 2e-5 * T);
      EXPECT_NEAR(r.bubble_fraction, (p / 2 - 1.0) / (3.0 * m + p / 2 - 1.0), 1e-6);
      const Result h1 =
          run_scenario(parse_scenario(dualpipe_uniform("zb-h1", p, m), "test")).result;
      EXPECT_NEAR(h1.iteration_time_s, (3 * m + p - 1) * T, 2e-5 * T);
      const Result one =
          run_scenario(parse_scenario(dualpipe_uniform("1f1b", p, m), "test")).result;
      EXPECT_NEAR(one.iteration_time_s, 3 * (m + p - 1) * T, 2e-5 * T);
    }
  // p = 2: (p/2 − 1) = 0, no bubble at all (T = 12 layers × 10 us; the optimizer step of 24
  // one-parameter layers takes under a nanosecond).
  for (const char* overlap : {"", kHidden}) {
    const Result two =
        run_scenario(parse_scenario(dualpipe_uniform("dualpipe", 2, 8, "1", overlap), "test"))
            .result;
    EXPECT_NEAR(two.iteration_time_s, 3 * 8 * 120e-6, 2e-5 * 120e-6);
  }
}

// The same closed form for the other even p that divide the 24 layers, with m = 2p (the least),
// 2p + 2 and 3p: the simulation ends (no deadlock) with every rank idle (p/2 − 1)·T, and each
// rank ran m forwards, m B and m W passes of its 24/p layers (one stage per micro-batch). Under
// DualPipe's own calls too it ends, with the same passes, and never sooner.
TEST(DualPipe, EveryEvenPipelineEndsWithTheSameClosedForm) {
  for (int p : {2, 6, 12})
    for (int m : {2 * p, 2 * p + 2, 3 * p})
      for (const char* overlap : {kHidden, ""}) {
        SCOPED_TRACE("p=" + std::to_string(p) + " m=" + std::to_string(m) + overlap);
        const double T = 24.0 / p * 10e-6;
        const auto out =
            run_scenario(parse_scenario(dualpipe_uniform("dualpipe", p, m, "1", overlap), "test"));
        if (*overlap != '\0')
          EXPECT_NEAR(out.result.iteration_time_s, (3 * m + p / 2 - 1) * T, 2e-5 * T);
        else
          EXPECT_GE(out.result.iteration_time_s, (3 * m + p / 2 - 1) * T - 2e-5 * T);
        std::vector<int> forwards(static_cast<std::size_t>(p)), backwards(forwards);
        for (const auto& op : out.built.schedule.ops) {
          if (op.kind != engine::OpKind::compute) continue;
          if (op.category == engine::Category::forward) ++forwards[op.rank];
          if (op.category == engine::Category::backward) ++backwards[op.rank];
        }
        EXPECT_EQ(forwards, std::vector<int>(static_cast<std::size_t>(p), m * 24 / p));
        EXPECT_EQ(backwards, std::vector<int>(static_cast<std::size_t>(p), 2 * m * 24 / p));
      }
}

// The two copies of a stage (on ranks s and p − 1 − s) add their gradients before either steps:
// one all-reduce per rank over the pair, of the rank's two stages' gradients (2 bytes each), the
// optimizer after it. Each direction's activations go to its own neighbour on its own streams.
TEST(DualPipe, CopiesSumTheirGradientsOverThePair) {
  const int p = 4;
  const auto out = run_scenario(parse_scenario(dualpipe_uniform("dualpipe", p, 8, "1e6"), "test"));
  const engine::Schedule& s = out.built.schedule;
  int sums = 0;
  for (const auto& op : s.ops) {
    if (s.name_of(op) != "dualpipe copies grad all-reduce") continue;
    ++sums;
    EXPECT_EQ(op.category, engine::Category::dp_comm);
    EXPECT_EQ(op.bytes, static_cast<std::uint64_t>(2 * (2 * 24 / p) * 1e6));
    std::vector<engine::Rank> pair = {op.rank, static_cast<engine::Rank>(p - 1 - op.rank)};
    std::sort(pair.begin(), pair.end());
    EXPECT_EQ(s.groups[op.group_or_peer].ranks, pair);
  }
  EXPECT_EQ(sums, p);
  // Rank 1 sends activations both ways: forward-direction ones to rank 2, the others to rank 0.
  std::vector<engine::Rank> fwd_peers, rev_peers;
  for (const auto& op : s.ops) {
    if (op.rank != 1 || op.kind != engine::OpKind::send || op.category != engine::Category::pp_comm)
      continue;
    const std::string& stream = s.stream_names[op.stream];
    if (stream == "pp send act") fwd_peers.push_back(op.group_or_peer);
    if (stream == "pp send act rev") rev_peers.push_back(op.group_or_peer);
  }
  EXPECT_EQ(fwd_peers, std::vector<engine::Rank>(4, 2));
  EXPECT_EQ(rev_peers, std::vector<engine::Rank>(4, 0));
}

void expect_dualpipe_error(const std::string& text, const std::string& key,
                           const std::string& says) {
  expect_plan_error(text, "dualpipe.yaml", key, says);
}

std::string dualpipe_gpt(const std::string& parallel, long global_batch = 32,
                         const std::string& extra_model = "") {
  return "name: gpt-dualpipe\n"
         "cluster: {nodes: 1, node: dgx-a100}\n"
         "model: {num_layers: 8, hidden_size: 1024, num_heads: 16, vocab_size: 32768" +
         extra_model +
         "}\n"
         "training: {global_batch: " +
         std::to_string(global_batch) +
         ", micro_batch: 1, seq_len: 512, precision: bf16}\n"
         "parallel: " +
         parallel +
         "\n"
         "simulation: {network_model: ideal}\n";
}

// With data parallelism (pp 4 · dp 2): DDP all-reduces and ZeRO-1 reduce-scatters each bucket
// once, after the latest W of its layers, whichever direction ran them (a chunk sees only half the
// micro-batches), and the pair's all-reduce follows every reduction.
TEST(DualPipe, DataParallelReductionsWaitForTheLastWeightGradients) {
  for (const std::string dp : {"ddp", "zero1"}) {
    SCOPED_TRACE(dp);
    const auto out = run_scenario(parse_scenario(
        dualpipe_gpt("{pp: 4, schedule: dualpipe, data_parallel: " + dp + "}"), "test"));
    const engine::Schedule& s = out.built.schedule;
    int reductions = 0;
    for (const auto& op : s.ops) {
      if (op.category != engine::Category::dp_comm || op.kind != engine::OpKind::collective ||
          s.name_of(op).starts_with("dualpipe"))
        continue;
      ++reductions;
      for (const engine::OpId d : s.dependencies(op))
        if (s.ops[d].category == engine::Category::backward) {
          EXPECT_TRUE(s.name_of(s.ops[d]).ends_with("bwd-w")) << s.name_of(s.ops[d]);
        }
    }
    EXPECT_GT(reductions, 0);
  }
}

TEST(DualPipe, PlansItDoesNotModelNameTheKey) {
  // A transformer with tp 2 and dp 1 on 8 GPUs runs (m = 32 ≥ 2·4).
  EXPECT_NO_THROW(
      run_scenario(parse_scenario(dualpipe_gpt("{tp: 2, pp: 4, schedule: dualpipe}"), "t")));
  expect_dualpipe_error(dualpipe_uniform("dualpipe", 3, 12), "parallel.pp", "needs an even pp");
  // m = 6 < 2·4 micro-batches, and an odd count.
  expect_dualpipe_error(dualpipe_uniform("dualpipe", 4, 6), "training.global_batch",
                        "even micro-batch count >= 2 · pp = 8, not 6");
  expect_dualpipe_error(dualpipe_uniform("dualpipe", 4, 9), "training.global_batch", "not 9");
  expect_dualpipe_error(dualpipe_uniform("dualpipe", 1, 4), "parallel.pp", "needs pp >= 2");
  expect_dualpipe_error(dualpipe_gpt("{pp: 4, schedule: dualpipe, data_parallel: fsdp}"),
                        "parallel.data_parallel", "modelled with unsharded parameters only");
  expect_dualpipe_error(dualpipe_gpt("{pp: 4, schedule: dualpipe, data_parallel: zero2}"),
                        "parallel.data_parallel", "modelled with ddp and zero1 only");
  expect_dualpipe_error(dualpipe_gpt("{pp: 2, cp: 2, schedule: dualpipe}"), "parallel.cp",
                        "modelled without context parallelism");
  expect_dualpipe_error(dualpipe_gpt("{pp: 4, schedule: dualpipe, virtual_stages: 2}"),
                        "parallel.virtual_stages", "needs schedule: interleaved");
  // MoE runs under dualpipe (test_dualpipe_moe.cpp) and, since its blocks split into B and W
  // the same way, under the zero-bubble schedules (test_zero_bubble_moe.cpp).
  EXPECT_NO_THROW(parse_scenario(
      dualpipe_gpt("{pp: 2, ep: 2, schedule: zb-h1}", 32, ", moe: {num_experts: 4, top_k: 2}"),
      "test"));
}

}  // namespace
}  // namespace clustersim::models
