// Pipeline parallelism (DESIGN.md "PP"; docs/parallelism.md "Pipeline parallelism"): the bubble
// measured from the timeline against the closed forms of the GPipe, 1F1B and interleaved papers,
// the micro-batches each stage holds in flight, the bytes crossing stage boundaries, and the plans
// that cannot be pipelined.
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "models/plans/pipeline_order.hpp"
#include "models/run_scenario.hpp"
#include "models/scenario.hpp"
#include "tests/models/pipeline_scenarios.hpp"

namespace clustersim::models {
namespace {

using engine::OpKind;

// p identical stages (pipeline_scenarios.hpp); 24 divides p·v for every case below.
std::string uniform_pipeline(const std::string& schedule, int p, int m, int v) {
  return uniform_pipeline_scenario(schedule, p, m, v);
}

// GPipe (Huang et al. 2019) and 1F1B (Narayanan et al. 2019): p − 1 forward+backward slots of
// idle per stage out of m + p − 1, whatever the forward/backward ratio.
double flat_bubble(int p, int m) {
  return (p - 1.0) / (m + p - 1.0);
}

// Interleaved 1F1B (Narayanan et al. 2021, §2.2.2): the bubble shrinks by v, (p − 1)/v slots of a
// whole stage's forward+backward out of m + (p − 1)/v.
double interleaved_bubble(int p, int m, int v) {
  const double idle = (p - 1.0) / v;
  return idle / (m + idle);
}

// The iteration, from the same slot count: a stage's forward+backward of one micro-batch is
// 24/p layers × 30 us, and the makespan is m + (p − 1)/v of those (v = 1 without interleaving).
double iteration_s(int p, int m, int v) {
  return (m + (p - 1.0) / v) * (24.0 / p) * 30e-6;
}

void expect_bubble(const std::string& schedule, int p, int m, int v, double expected) {
  SCOPED_TRACE(schedule + " p=" + std::to_string(p) + " m=" + std::to_string(m) +
               " v=" + std::to_string(v));
  const auto out = run_scenario(parse_scenario(uniform_pipeline(schedule, p, m, v), "test"));
  // Identical stages: the partition must give each chunk 24 / (p·v) layers.
  for (const auto& chunk : out.built.partition)
    EXPECT_EQ(static_cast<int>(chunk.size()), 24 / (p * v));
  EXPECT_NEAR(out.result.bubble_fraction, expected, 0.005 * expected);
  EXPECT_NEAR(out.result.iteration_time_s, iteration_s(p, m, v), 0.005 * iteration_s(p, m, v));
}

TEST(Pipeline, GpipeBubbleIsPMinusOneOverMPlusPMinusOne) {
  for (int p : {2, 4})
    for (int m : {4, 8, 16})
      expect_bubble("gpipe", p, m, 1, flat_bubble(p, m));
}

TEST(Pipeline, OneFOneBBubbleEqualsGpipes) {
  for (int p : {2, 4})
    for (int m : {4, 8, 16})
      expect_bubble("1f1b", p, m, 1, flat_bubble(p, m));
}

TEST(Pipeline, InterleavedBubbleShrinksByTheVirtualStages) {
  for (int p : {2, 4})
    for (int m : {4, 8, 16})
      for (int v : {2, 3})
        expect_bubble("interleaved", p, m, v, interleaved_bubble(p, m, v));
}

// Uneven stages for a transformer (parallel.stage_layers, as Llama 3 405B's 126 layers on PP 16
// as [7, 8 × 14, 7]): here 14 blocks as [3, 4, 4, 3] on 4 stages. Each chunk holds its blocks
// (the embedding joins the first, the LM head the last), and with free communication GPipe's
// makespan is a flow shop's over identical jobs: Σ F_i + (m − 1)·max F_i for the forwards, then
// from there Σ B_i + (m − 1)·max B_i for the backwards, with F_i, B_i a stage's per-micro-batch
// forward and backward times (read from the ops' durations).
TEST(Pipeline, UnevenTransformerStagesFromStageLayers) {
  const int m = 6;
  const std::string text =
      "cluster: {nodes: 1, node: dgx-a100, gpus_per_node: 4}\n"
      "model: {num_layers: 14, hidden_size: 1024, num_heads: 16, ffn_hidden_size: 4096,\n"
      "        vocab_size: 32000}\n"
      "training: {global_batch: " +
      std::to_string(m) +
      ", micro_batch: 1, seq_len: 1024}\n"
      "parallel: {pp: 4, schedule: gpipe, stage_layers: [3, 4, 4, 3]}\n"
      "simulation: {network_model: ideal}\n";
  const auto out = run_scenario(parse_scenario(text, "test"));
  const auto& layers = out.built.layers;
  const std::vector<int> blocks_expected = {3, 4, 4, 3};
  for (std::size_t g = 0; g < 4; ++g) {
    std::set<int> blocks;
    for (int l : out.built.partition[g])
      if (layers[static_cast<std::size_t>(l)].block >= 0)
        blocks.insert(layers[static_cast<std::size_t>(l)].block);
    EXPECT_EQ(static_cast<int>(blocks.size()), blocks_expected[g]) << "stage " << g;
  }
  EXPECT_EQ(layers[static_cast<std::size_t>(out.built.partition[0].front())].role,
            LayerRole::embedding);
  EXPECT_EQ(layers[static_cast<std::size_t>(out.built.partition[3].back())].role, LayerRole::head);

  // Per stage (rank = stage with pp only): forward and backward time of micro-batch 0.
  const auto& s = out.built.schedule;
  const auto& tl = out.timeline;
  std::vector<double> f(4, 0.0), b(4, 0.0);
  double last_backward_end = 0;
  for (std::size_t i = 0; i < s.ops.size(); ++i) {
    const auto& op = s.ops[i];
    if (op.kind != OpKind::compute) continue;
    const double d = (tl.end[i] - tl.start[i]).seconds();
    if (op.microbatch() == 0 && op.category == engine::Category::forward) f[op.rank] += d;
    if (op.microbatch() == 0 &&
        (op.category == engine::Category::backward || op.category == engine::Category::recompute))
      b[op.rank] += d;
    if (op.rank == 0 && op.category == engine::Category::backward)
      last_backward_end = std::max(last_backward_end, tl.end[i].seconds());
  }
  auto flow_shop = [&](const std::vector<double>& t) {
    double sum = 0, peak = 0;
    for (double x : t) {
      sum += x;
      peak = std::max(peak, x);
    }
    return sum + (m - 1) * peak;
  };
  const double expected = flow_shop(f) + flow_shop(b);
  EXPECT_NEAR(last_backward_end, expected, 1e-9 * expected);
  // The middle stages hold 4 blocks and set the pace: the bubble is what the critical rank idles.
  EXPECT_GT(out.result.bubble_fraction, 0.0);
}

// A first chunk of the embedding alone and a last of the head alone (stage_layers 0 at either
// end: the Llama 3 paper's pipeline, whose first and last stages hold one block fewer): 14 blocks
// as [0, 7, 7, 0]. A 0 anywhere else is an error naming the key.
TEST(Pipeline, AFirstOrLastChunkMayHoldTheEmbeddingOrTheHeadAlone) {
  const std::string text =
      "cluster: {nodes: 1, node: dgx-a100, gpus_per_node: 4}\n"
      "model: {num_layers: 14, hidden_size: 1024, num_heads: 16, ffn_hidden_size: 4096,\n"
      "        vocab_size: 32000}\n"
      "training: {global_batch: 4, micro_batch: 1, seq_len: 1024}\n"
      "parallel: {pp: 4, schedule: 1f1b, stage_layers: [0, 7, 7, 0]}\n"
      "simulation: {network_model: ideal}\n";
  const auto out = run_scenario(parse_scenario(text, "test"));
  const auto& layers = out.built.layers;
  const auto& part = out.built.partition;
  ASSERT_EQ(part.size(), 4u);
  ASSERT_EQ(part[0].size(), 1u);
  EXPECT_EQ(layers[static_cast<std::size_t>(part[0][0])].role, LayerRole::embedding);
  ASSERT_EQ(part[3].size(), 1u);
  EXPECT_EQ(layers[static_cast<std::size_t>(part[3][0])].role, LayerRole::head);
  for (int g : {1, 2}) {
    std::set<int> blocks;
    for (int l : part[static_cast<std::size_t>(g)])
      blocks.insert(layers[static_cast<std::size_t>(l)].block);
    EXPECT_EQ(blocks.size(), 7u) << "chunk " << g;
  }
  EXPECT_GT(out.result.iteration_time_s, 0.0);

  std::string middle = text;
  middle.replace(middle.find("[0, 7, 7, 0]"), 12, "[7, 0, 7, 0]");
  try {
    parse_scenario(middle, "test");
    FAIL() << "a middle chunk without blocks was accepted";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("parallel.stage_layers"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("the first and last may give 0"), std::string::npos)
        << e.what();
  }
}

// Without a pipeline there is no bubble: each rank (here two data-parallel replicas with free
// communication) never waits.
TEST(Pipeline, NoPipelineNoBubble) {
  std::string text = uniform_pipeline("1f1b", 1, 8, 1);
  text.replace(text.find("gpus_per_node: 1"), 16, "gpus_per_node: 2");
  const auto out = run_scenario(parse_scenario(text, "test"));
  EXPECT_NEAR(out.result.iteration_time_s, iteration_s(1, 4, 1), 1e-9);
  EXPECT_NEAR(out.result.bubble_fraction, 0.0, 1e-9);
}

// Every order runs each (micro-batch, chunk) forward once and its backward once, later.
TEST(Pipeline, EveryOrderRunsEachPassOnceForwardFirst) {
  const std::tuple<PipelineSchedule, int, int, int> cases[] = {
      {PipelineSchedule::gpipe, 4, 8, 1},
      {PipelineSchedule::one_f_one_b, 4, 8, 1},
      {PipelineSchedule::one_f_one_b, 4, 2, 1},
      {PipelineSchedule::interleaved, 4, 8, 2},
      {PipelineSchedule::interleaved, 2, 4, 3}};
  for (const auto& [schedule, p, m, v] : cases)
    for (int stage = 0; stage < p; ++stage) {
      std::set<std::pair<int, int>> forwarded, backwarded;
      for (const auto& s : pipeline_order(schedule, stage, p, m, v)) {
        const std::pair<int, int> key{s.microbatch, s.chunk};
        if (s.forward) {
          EXPECT_TRUE(forwarded.insert(key).second);
        } else {
          EXPECT_TRUE(forwarded.count(key)) << "backward before forward";
          EXPECT_TRUE(backwarded.insert(key).second);
        }
      }
      EXPECT_EQ(static_cast<int>(forwarded.size()), m * v);
      EXPECT_EQ(static_cast<int>(backwarded.size()), m * v);
    }
}

// GPipe holds every micro-batch before the first backward.
TEST(Pipeline, GpipeHoldsAllMicroBatches) {
  for (int stage = 0; stage < 4; ++stage)
    EXPECT_EQ(peak_in_flight(pipeline_order(PipelineSchedule::gpipe, stage, 4, 8, 1)), 8);
}

// 1F1B (PipeDream-Flush): stage i runs p − i − 1 warm-up forwards, then one more before its first
// backward, so it holds p − i micro-batches (m ≥ p); with fewer micro-batches, all m.
TEST(Pipeline, OneFOneBHoldsPMinusStage) {
  for (int p : {2, 4, 8})
    for (int stage = 0; stage < p; ++stage) {
      EXPECT_EQ(peak_in_flight(pipeline_order(PipelineSchedule::one_f_one_b, stage, p, 16, 1)),
                p - stage);
      EXPECT_EQ(peak_in_flight(pipeline_order(PipelineSchedule::one_f_one_b, stage, p, 2, 1)),
                std::min(2, p - stage));
    }
}

// Megatron-LM's interleaved schedule (schedules.py, forward_backward_pipelining_with_
// interleaving): stage s runs (p − s − 1)·2 + (v − 1)·p warm-up forwards of model chunks, then
// alternates, so it holds that plus one chunk activation, at most all m·v. On stage 0 that is
// v·p + p − 1 chunks = p·(1 + (p − 1)/(p·v)) stage-sized micro-batches, Korthikanti et al. 2022
// §4.2.3's memory factor for the interleaved schedule.
TEST(Pipeline, InterleavedHoldsMegatronsWarmupPlusOne) {
  for (int p : {2, 4})
    for (int v : {2, 3})
      for (int m : {2 * p, 4 * p})
        for (int stage = 0; stage < p; ++stage) {
          const int expected = std::min((p - stage - 1) * 2 + (v - 1) * p + 1, m * v);
          EXPECT_EQ(peak_in_flight(pipeline_order(PipelineSchedule::interleaved, stage, p, m, v)),
                    expected)
              << "p=" << p << " v=" << v << " m=" << m << " stage=" << stage;
        }
  // Korthikanti's factor on stage 0, p = 4, v = 2, m = 16: 4·(1 + 3/8) = 5.5 micro-batches = 11
  // chunk activations.
  EXPECT_EQ(peak_in_flight(pipeline_order(PipelineSchedule::interleaved, 0, 4, 16, 2)), 11);
}

// A GPT shape with tp 2, pp 2 (dp 2): b = 2, s = 512, h = 1024, bf16.
constexpr double kB = 2, kS = 512, kH = 1024;

std::string gpt(const std::string& parallel, long global_batch = 16) {
  return "name: gpt-pp\n"
         "cluster: {nodes: 1, node: dgx-a100}\n"
         "model: {num_layers: 8, hidden_size: 1024, num_heads: 16, vocab_size: 32768}\n"
         "training: {global_batch: " +
         std::to_string(global_batch) +
         ", micro_batch: 2, seq_len: 512, precision: bf16}\n"
         "parallel: " +
         parallel +
         "\n"
         "simulation: {network_model: ideal}\n";
}

struct P2p {
  int sends = 0, recvs = 0;
  std::set<std::uint64_t> bytes;
};

P2p p2p(const engine::Schedule& s) {
  P2p out;
  for (const auto& op : s.ops) {
    if (op.kind != OpKind::send && op.kind != OpKind::recv) continue;
    (op.kind == OpKind::send ? out.sends : out.recvs)++;
    out.bytes.insert(op.bytes);
  }
  return out;
}

// Each micro-batch's activation crosses each of the p·v − 1 chunk boundaries forward and its
// gradient backward, once per (tp, dp) replica of the pipeline: b·s·h·2 bytes (Megatron's p2p
// tensor is (s, b, h)), the 1/t shard with sequence parallelism.
TEST(Pipeline, SendRecvCarryOneActivationPerMicroBatchAndBoundary) {
  const double full = kB * kS * kH * 2;
  const int replicas = 2 * 2;  // tp · dp
  const int m = 16 / (2 * 2);  // global_batch / (micro_batch · dp)
  struct Case {
    std::string parallel;
    int boundaries;
    double bytes;
  };
  const Case cases[] = {
      {"{tp: 2, pp: 2, schedule: 1f1b}", 1, full},
      {"{tp: 2, pp: 2, schedule: gpipe}", 1, full},
      {"{tp: 2, pp: 2, schedule: interleaved, virtual_stages: 2}", 3, full},
      {"{tp: 2, pp: 2, schedule: 1f1b, sequence_parallel: true}", 1, full / 2},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.parallel);
    const auto built = build_schedule(parse_scenario(gpt(c.parallel), "test"));
    const P2p got = p2p(built.schedule);
    EXPECT_EQ(got.sends, 2 * m * c.boundaries * replicas);
    EXPECT_EQ(got.recvs, got.sends);
    ASSERT_EQ(got.bytes.size(), 1u);
    EXPECT_EQ(static_cast<double>(*got.bytes.begin()), c.bytes);
  }
}

// The plans that cannot be pipelined are refused with the key to change.
void expect_scenario_error(const std::string& text, const std::string& key,
                           const std::string& says) {
  expect_plan_error(text, "pp.yaml", key, says);
}

TEST(Pipeline, ImpossiblePlansNameTheKey) {
  // 8 blocks over pp 3 (a 3-GPU node, so that tp · pp divides the world).
  std::string three = gpt("{pp: 3}", 6);
  three.replace(three.find("node: dgx-a100"), 14, "gpus_per_node: 3, gpu: A100-SXM4-80GB");
  expect_scenario_error(three, "parallel.pp", "num_layers = 8 is not divisible by pp = 3");
  // 8 blocks over pp 2 × 3 chunks.
  expect_scenario_error(gpt("{tp: 2, pp: 2, schedule: interleaved, virtual_stages: 3}"),
                        "parallel.virtual_stages", "pp · virtual_stages = 2 · 3 = 6");
  // Interleaving 6 micro-batches over 4 stages: m = 12 / (1 · 2) = 6 with tp 1, pp 4, dp 2.
  std::string twelve = gpt("{pp: 4, schedule: interleaved, virtual_stages: 2}", 12);
  twelve.replace(twelve.find("micro_batch: 2"), 14, "micro_batch: 1");
  expect_scenario_error(twelve, "training.global_batch", "6 mod 4 = 2, holds fewer than pp = 4");
  // Megatron-Core's --microbatch-group-size-per-virtual-pipeline-stage: groups of 6 hold all 6;
  // groups of 5 leave a last group of 1; 3 is under pp and 7 over m.
  auto grouped = [&](int g) {
    std::string t = twelve;
    t.replace(t.find("virtual_stages: 2"), 17,
              "virtual_stages: 2, microbatch_group_size: " + std::to_string(g));
    return t;
  };
  EXPECT_NO_THROW(parse_scenario(grouped(6), "test"));
  expect_scenario_error(grouped(5), "parallel.microbatch_group_size", "6 mod 5 = 1");
  expect_scenario_error(grouped(3), "parallel.microbatch_group_size", "between pp = 4");
  expect_scenario_error(grouped(7), "parallel.microbatch_group_size", "micro-batch count 6");
  expect_scenario_error(gpt("{pp: 2, microbatch_group_size: 2}"), "parallel.microbatch_group_size",
                        "needs schedule: interleaved");
  // Chunks without interleaving.
  expect_scenario_error(gpt("{tp: 2, pp: 2, schedule: 1f1b, virtual_stages: 2}"),
                        "parallel.virtual_stages", "needs schedule: interleaved");
  // A layer list with fewer layers than stages.
  std::string few = uniform_pipeline("1f1b", 4, 4, 1);
  few.replace(few.find("repeat: 24"), 10, "repeat: 3");
  expect_scenario_error(few, "parallel.pp", "the model has 3 layers, fewer than the 4");
}

// Zero-bubble schedules (Qi et al., ICLR 2024, §3.1): stage i of p runs (F_x, B_{x−lag_b},
// W_{x−lag_w}) for x = 0, 1, ..., lag_b = p − 1 − i and lag_w = p − 1 for ZB-H1, twice both for
// ZB-H2. Every micro-batch gets one F, then one B, then one W.
TEST(ZeroBubble, EveryMicroBatchRunsForwardThenInputThenWeightGradients) {
  for (const auto schedule : {PipelineSchedule::zb_h1, PipelineSchedule::zb_h2})
    for (const auto& [p, m] : {std::pair{4, 8}, std::pair{4, 2}, std::pair{2, 5}})
      for (int stage = 0; stage < p; ++stage) {
        std::vector<int> pass(static_cast<std::size_t>(m), 0);  // 1 after F, 2 after B, 3 after W
        for (const auto& s : pipeline_order(schedule, stage, p, m, 1)) {
          const int want = s.forward ? 0 : (s.weight ? 2 : 1);
          EXPECT_EQ(pass[static_cast<std::size_t>(s.microbatch)], want)
              << "stage " << stage << " mb " << s.microbatch;
          pass[static_cast<std::size_t>(s.microbatch)] = want + 1;
        }
        EXPECT_EQ(pass, std::vector<int>(static_cast<std::size_t>(m), 3));
      }
  // The published ZB-H1 order of the last stage of 4 (figure 3): F0 B0 F1 B1 F2 B2 F3 B3 W0 ...,
  // its W passes three micro-batches behind; stage 0 warms up with three forwards.
  auto text = [](const std::vector<PipelineStep>& steps) {
    std::string t;
    for (const auto& s : steps)
      t += std::string(s.forward ? "F" : s.weight ? "W" : "B") + std::to_string(s.microbatch) + " ";
    return t;
  };
  EXPECT_EQ(text(pipeline_order(PipelineSchedule::zb_h1, 3, 4, 5, 1)),
            "F0 B0 F1 B1 F2 B2 F3 B3 W0 F4 B4 W1 W2 W3 W4 ");
  EXPECT_EQ(text(pipeline_order(PipelineSchedule::zb_h1, 0, 4, 5, 1)),
            "F0 F1 F2 F3 B0 W0 F4 B1 W1 B2 W2 B3 W3 B4 W4 ");
}

// Activations are held from F until W (W's weight gradients need the saved inputs): ZB-H1 keeps
// p micro-batches on every stage, 1F1B's peak (its stage 0), the paper's "same memory as 1F1B";
// ZB-H2 2p − 1, about twice.
TEST(ZeroBubble, H1HoldsWhat1F1BHoldsAtItsPeakAndH2Twice) {
  for (int p : {2, 4, 8})
    for (int stage = 0; stage < p; ++stage) {
      EXPECT_EQ(peak_in_flight(pipeline_order(PipelineSchedule::zb_h1, stage, p, 32, 1)), p);
      EXPECT_EQ(peak_in_flight(pipeline_order(PipelineSchedule::zb_h2, stage, p, 32, 1)),
                2 * p - 1);
    }
}

// With F = B = W = T per stage (uniform_pipeline: a layer's backward of 20 us splits into B and W
// of 10 us each, as a linear layer's input and weight gradients cost the same FLOPs), T = 24/p
// layers × 10 us:
//   1F1B: (m + p − 1)·3T, the bubble (p − 1)(F + B + W).
//   ZB-H1: m·3T + (p − 1)(F + B − W) = (3m + p − 1)·T (the paper's §3.1): idle (p − 1)·T, which
//   is (p − 1)/(3m) of the stage's compute, a third of 1F1B's.
//   Over k iterations (each stage steps its optimizer and goes on; dp = 1, no clipping sync),
//   ZB-H1's stage 0 waits at the end of each iteration for the gradients, so k·(3m + p − 1)·T;
//   ZB-H2 warms up with 2(p − 1 − i) forwards and stage 0 finishes its last W before the last
//   stage does, so the next iteration's forwards run into that tail: after the first iteration
//   each adds exactly 3m·T, no bubble in the steady state (given m ≥ 2p − 1).
TEST(ZeroBubble, H1CutsTheBubbleToAThirdAndH2ToNothingInTheSteadyState) {
  for (int p : {2, 4})
    for (int m : {4, 8, 16}) {
      SCOPED_TRACE("p=" + std::to_string(p) + " m=" + std::to_string(m));
      const double T = 24.0 / p * 10e-6;
      auto run = [&](const std::string& schedule, int iterations) {
        std::string text = uniform_pipeline(schedule, p, m, 1);
        text.replace(text.find("network_model: ideal"), 20,
                     "network_model: ideal, iterations: " + std::to_string(iterations));
        return run_scenario(parse_scenario(text, "test")).result;
      };
      const Result h1 = run("zb-h1", 1);
      EXPECT_NEAR(h1.iteration_time_s, (3 * m + p - 1) * T, 2e-5 * T);
      EXPECT_NEAR(h1.breakdown_s.idle / h1.breakdown_s.compute, (p - 1.0) / (3.0 * m), 1e-6);
      EXPECT_NEAR(run("1f1b", 1).breakdown_s.idle, 3 * (p - 1) * T, 2e-5 * T);
      // simulation.iterations divides the makespan by k.
      EXPECT_NEAR(run("zb-h1", 3).iteration_time_s * 3, 3 * (3 * m + p - 1) * T, 2e-5 * T);
      // ZB-H2's warm-up of 2(p − 1) forwards on stage 0 needs m ≥ 2p − 1 micro-batches (with
      // fewer, stage 0 runs out of forwards before its first B, as p = 4, m = 4 does: 16·T).
      if (m < 2 * p - 1) continue;
      const double h2_one = run("zb-h2", 1).iteration_time_s;
      EXPECT_NEAR(h2_one, (3 * m + p - 1) * T, 2e-5 * T);  // no single iteration does better
      EXPECT_NEAR(run("zb-h2", 3).iteration_time_s * 3 - h2_one, 2 * 3 * m * T, 2e-5 * T);
    }
}

// The W ops carry the weight-gradient FLOPs: a transformer's backward FLOPs are B's plus W's, and
// every W runs on the compute stream after its B.
TEST(ZeroBubble, WeightGradientOpsSplitTheBackwardsFlops) {
  auto flops = [](const std::string& schedule) {
    const auto out =
        run_scenario(parse_scenario(gpt("{pp: 2, schedule: " + schedule + "}", 8), "test"));
    double backward = 0;
    int w_ops = 0;
    for (const auto& op : out.built.schedule.ops)
      if (op.category == engine::Category::backward) {
        backward += out.built.schedule.flops(op);
        w_ops += out.built.schedule.name_of(op).ends_with("bwd-w");
      }
    return std::pair{backward, w_ops};
  };
  const auto [one, none] = flops("1f1b");
  const auto [zb, w] = flops("zb-h1");
  EXPECT_EQ(none, 0);
  // One W op per layer and micro-batch, as many as the backward ops without "-w".
  EXPECT_GT(w, 0);
  EXPECT_NEAR(zb, one, 1e-9 * one);
}

// ZeRO-1 (Megatron's distributed optimizer) reduce-scatters each layer's gradients once its last
// micro-batch's W ran: every reduction waits for a W op, none for a B op.
TEST(ZeroBubble, ZeroOneReducesAfterTheWeightGradients) {
  const auto out = run_scenario(
      parse_scenario(gpt("{pp: 2, schedule: zb-h1, data_parallel: zero1}", 16), "test"));
  const engine::Schedule& s = out.built.schedule;
  int reductions = 0;
  for (const auto& op : s.ops) {
    if (op.category != engine::Category::dp_comm ||
        op.collective != engine::CollectiveType::reduce_scatter)
      continue;
    ++reductions;
    for (const engine::OpId d : s.dependencies(op)) {
      const std::string& name = s.name_of(s.ops[d]);
      if (s.ops[d].category == engine::Category::backward) {
        EXPECT_TRUE(name.ends_with("bwd-w")) << name;
      }
    }
  }
  EXPECT_GT(reductions, 0);
}

TEST(ZeroBubble, PlansItDoesNotModelNameTheKey) {
  std::string one = uniform_pipeline("zb-h2", 1, 4, 1);
  expect_scenario_error(one, "parallel.pp", "schedule zb-h2 needs pp >= 2");
  expect_scenario_error(gpt("{pp: 2, schedule: zb-h1, virtual_stages: 2}"),
                        "parallel.virtual_stages", "needs schedule: interleaved");
}

}  // namespace
}  // namespace clustersim::models
