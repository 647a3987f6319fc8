// Zero-bubble schedules with context parallelism (docs/parallelism.md "Zero bubble"): the K/V
// exchange of an attention block's backward belongs to B (it carries what the attention's input
// gradients need), W is the projections' weight gradients over the rank's s/cp tokens.
#include <gtest/gtest.h>

#include <string>

#include "models/run_scenario.hpp"
#include "models/scenario.hpp"
#include "rank0_ops.hpp"

namespace clustersim::models {
namespace {

using engine::Category;

// A Llama shape: 4 blocks, h = 1024, 16 heads of d = 64, 4 KV heads, SwiGLU ffn 2816; s = 4096,
// micro-batch 1, global batch 8; one DGX H100: pp 2 · cp 2 -> dp 2, 4 micro-batches.
// K and V of the whole sequence for the rank's 4 KV heads, bf16.
constexpr std::uint64_t kKvBytes = 1ULL * 4096 * 4 * 64 * 2 * 2;

std::string llama(const std::string& parallel, const std::string& network = "analytical") {
  return "name: zb-cp\n"
         "cluster: {nodes: 1, node: dgx-h100}\n"
         "model: {num_layers: 4, hidden_size: 1024, num_heads: 16, num_kv_heads: 4, "
         "ffn_hidden_size: 2816, vocab_size: 32000, activation: swiglu, norm: rmsnorm, "
         "bias: false, learned_positions: false}\n"
         "training: {global_batch: 8, micro_batch: 1, seq_len: 4096, precision: bf16, "
         "attention: flash}\n"
         "parallel: {" +
         parallel +
         "}\n"
         "simulation: {network_model: " +
         network + "}\n";
}

// B keeps the exchange: each attention block's backward ring carries K, V and the dK, dV
// accumulators (2 × the forward's bytes) and waits for no W. W of an attention block is the QKV
// and output projections' dW = Xᵀ·dY, linear in the rank's tokens: at cp 2 exactly half of W at
// cp 1 (the same plan otherwise); B + W keeps 1F1B's backward FLOPs.
TEST(ZeroBubbleCp, TheKvExchangeStaysWithBAndWIsTheProjectionsWeightGradients) {
  const auto zb = build_schedule(parse_scenario(llama("pp: 2, cp: 2, schedule: zb-h1"), "t.yaml"));
  const auto& s = zb.schedule;
  int rings = 0;
  for (const auto& op : s.ops) {
    if (op.category != Category::cp_comm || op.rank != 0) continue;
    for (const engine::OpId d : s.dependencies(op))
      EXPECT_EQ(s.name_of(s.ops[d]).find("bwd-w"), std::string::npos) << s.name_of(op);
    if (s.name_of(op).find(" bwd ") != std::string::npos) {
      EXPECT_EQ(op.bytes, 2 * kKvBytes);
      ++rings;
    }
  }
  EXPECT_EQ(rings, 2 * 4);  // rank 0 (stage 0) holds 2 blocks, 4 micro-batches
  const auto whole = build_schedule(parse_scenario(llama("pp: 2, schedule: zb-h1"), "t.yaml"));
  const double w2 = s.flops(s.ops[find_op(s, 0, "L0.attn bwd-w mb0")]);
  const double w1 =
      whole.schedule.flops(whole.schedule.ops[find_op(whole.schedule, 0, "L0.attn bwd-w mb0")]);
  ASSERT_GT(w1, 0);
  EXPECT_DOUBLE_EQ(w2, w1 / 2);
  auto backward_flops = [](const engine::Schedule& sch) {
    double f = 0;
    for (const auto& op : sch.ops)
      if (op.category == Category::backward) f += sch.flops(op);
    return f;
  };
  const auto one = build_schedule(parse_scenario(llama("pp: 2, cp: 2"), "t.yaml"));
  EXPECT_NEAR(backward_flops(s), backward_flops(one.schedule), 1e-9 * backward_flops(s));
}

// W fills what 1F1B leaves idle: with free communication the pipeline idles less under ZB-H1 and
// finishes no later.
TEST(ZeroBubbleCp, H1IdlesLessThanOneFOneB) {
  const auto zb =
      run_scenario(parse_scenario(llama("pp: 2, cp: 2, schedule: zb-h1", "ideal"), "t.yaml"));
  const auto one = run_scenario(parse_scenario(llama("pp: 2, cp: 2", "ideal"), "t.yaml"));
  EXPECT_LT(zb.result.breakdown_s.idle, one.result.breakdown_s.idle);
  EXPECT_LE(zb.result.iteration_time_s, one.result.iteration_time_s * (1 + 1e-12));
}

// DualPipe overlaps a pair's passes, which the exchange is not modelled beside: still an error.
TEST(ZeroBubbleCp, DualPipeStillRefusesContextParallelism) {
  EXPECT_THROW(parse_scenario(llama("pp: 2, cp: 2, schedule: dualpipe"), "t.yaml"), ScenarioError);
  EXPECT_NO_THROW(parse_scenario(llama("pp: 2, cp: 2, schedule: zb-h2"), "t.yaml"));
}

}  // namespace
}  // namespace clustersim::models
