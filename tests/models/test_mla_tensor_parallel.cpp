// Latent attention under tensor and sequence parallelism, as Megatron-Core's MLASelfAttention
// runs it (docs/parallelism.md "Latent attention"): the down-projections are duplicated on every
// TP rank and run on its own tokens, their latents are gathered instead of the hidden state, and
// the gradients of every duplicated tensor are all-reduced over TP before the optimizer step.
// Every figure below is worked by hand from the shapes.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <variant>

#include "models/kernels/transformer_kernels.hpp"
#include "models/model_costs.hpp"
#include "models/model_spec.hpp"
#include "models/run_scenario.hpp"
#include "models/scenario.hpp"
#include "tests/models/rank0_ops.hpp"

namespace clustersim::models {
namespace {

// 2 blocks, h 256, 4 heads, q latent 64, kv latent 32, rope 16, nope 32, v 32, RMSNorm, no bias;
// b 2, s 128, bf16, fp32 gradients; tp 2 on 2 GPUs of one node, one micro-batch.
std::string tiny_mla(const std::string& parallel) {
  return "name: mla-tp\n"
         "cluster: {nodes: 1, node: dgx-h100, gpus_per_node: 2}\n"
         "model: {num_layers: 2, hidden_size: 256, num_heads: 4, ffn_hidden_size: 512,\n"
         "        vocab_size: 1024, activation: swiglu, norm: rmsnorm, bias: false,\n"
         "        learned_positions: false,\n"
         "        mla: {q_lora_rank: 64, kv_lora_rank: 32, qk_nope_head_dim: 32,\n"
         "              qk_rope_head_dim: 16, v_head_dim: 32}}\n"
         "training: {global_batch: 2, micro_batch: 2, seq_len: 128, precision: bf16,\n"
         "           grad_reduce_dtype: fp32, attention: flash}\n"
         "parallel: {tp: 2, " +
         parallel +
         "}\n"
         "simulation: {network_model: analytical}\n";
}

// Tensors every TP rank holds whole, per block: the attention norm 256, q_down 256·64 = 16,384,
// its norm 64, kv_down 256·(32 + 16) = 12,288, its norm 32, the MLP norm 256: 29,280; two
// blocks and the final norm 256: 58,816.
constexpr double kReplicated = 2 * (256 + 16'384 + 64 + 12'288 + 32 + 256) + 256;

// With sequence parallelism the attention block gathers the latents, b·s·(64 + 32 + 16)·2 B
// = 57,344 B, where a multi-head block gathers b·s·h·2 = 131,072 B (the MLP still does); its
// backward reduce-scatters their gradients (the same bytes); the duplicated tensors' fp32
// gradients are all-reduced over TP once, 58,816 · 4 B.
TEST(LatentAttentionTp, SequenceParallelGathersTheLatentsNotTheHiddenState) {
  const auto built = build_schedule(parse_scenario(tiny_mla("sequence_parallel: true"), "t.yaml"));
  const auto& s = built.schedule;
  EXPECT_EQ(rank0_op(s, "L0.attn fwd tp all_gather mb0").bytes, 2u * 128 * 112 * 2);
  EXPECT_EQ(rank0_op(s, "L0.mlp fwd tp all_gather mb0").bytes, 2u * 128 * 256 * 2);
  EXPECT_EQ(rank0_op(s, "L0.attn fwd tp reduce_scatter mb0").bytes, 2u * 128 * 256 * 2);
  EXPECT_EQ(rank0_op(s, "L0.attn bwd tp reduce_scatter mb0").bytes, 2u * 128 * 112 * 2);
  EXPECT_EQ(rank0_op(s, "L0.mlp bwd tp reduce_scatter mb0").bytes, 2u * 128 * 256 * 2);
  EXPECT_EQ(rank0_op(s, "tp all_reduce replicated grads").bytes,
            static_cast<std::uint64_t>(kReplicated * 4));
}

// Without sequence parallelism every rank holds all tokens: no gathers; the backward all-reduces
// the latents' gradients (the column-parallel up-projections' input gradients are partial),
// and the duplicated tensors' gradients are already equal on every rank: no all-reduce.
TEST(LatentAttentionTp, WithoutSequenceParallelismTheLatentGradientsAreAllReduced) {
  const auto built = build_schedule(parse_scenario(tiny_mla("sequence_parallel: false"), "t.yaml"));
  const auto& s = built.schedule;
  EXPECT_FALSE(rank0_has_op(s, "L0.attn fwd tp all_gather mb0"));
  EXPECT_EQ(rank0_op(s, "L0.attn fwd tp all_reduce mb0").bytes, 2u * 128 * 256 * 2);
  EXPECT_EQ(rank0_op(s, "L0.attn bwd tp all_reduce mb0").bytes, 2u * 128 * 112 * 2);
  EXPECT_EQ(rank0_op(s, "L0.mlp bwd tp all_reduce mb0").bytes, 2u * 128 * 256 * 2);
  EXPECT_FALSE(rank0_has_op(s, "tp all_reduce replicated grads"));
}

// A rank's weights: the duplicated tensors whole and the rest halved, 2 B each (bf16, no
// master copy kept apart: the memory model's weights term).
TEST(LatentAttentionTp, DuplicatedTensorsAreNotShardedInMemory) {
  const Scenario sc = parse_scenario(tiny_mla("sequence_parallel: true"), "t.yaml");
  const double all = total_params(expand_model(sc.model, sc.training.seq_len));
  const auto est = run_scenario(sc).result.memory;
  ASSERT_EQ(est.per_stage.size(), 1u);
  EXPECT_NEAR(est.per_stage[0].weights, 2 * (kReplicated + (all - kReplicated) / 2), 1.0);
}

// Under sequence parallelism with tp 8 the down-projections run on the rank's 4096 / 8 = 512
// tokens; the up-projections on the gathered 4096.
TEST(LatentAttentionTp, DownProjectionsRunOnTheRanksOwnTokens) {
  using kernels::Pass;
  const ModelSpec* v3 = find_model("deepseek-v3");
  ASSERT_NE(v3, nullptr);
  auto c = kernels::kernel_config(std::get<TransformerSpec>(v3->body), 1, 4096, 8);
  c.attention = kernels::AttentionImpl::flash;
  c.sequence_parallel = true;
  engine::KernelTable names;
  std::map<std::string, engine::Kernel> by_name;
  for (const auto& k : kernels::attention_block_kernels(c, Pass::forward, names))
    by_name[names.name_of(k.name)] = k;
  for (const char* down : {"attn.q_down.fprop", "attn.kv_down.fprop"}) {
    ASSERT_TRUE(by_name.count(down)) << down;
    EXPECT_EQ(by_name[down].m, 512u) << down;
  }
  for (const char* up : {"attn.q_up.fprop", "attn.kv_up.fprop", "attn.proj.fprop"}) {
    ASSERT_TRUE(by_name.count(up)) << up;
    EXPECT_EQ(by_name[up].m, 4096u) << up;
  }
}

}  // namespace
}  // namespace clustersim::models
