// Ops carry kernels (docs/fidelity.md "How ops get kernels"): every compute op a plan emits for a
// transformer or the ResNet-50 preset names its kernel list, identical layers share one list,
// recompute re-runs the forward list (full) or the attention core (selective), the MoE ops carry
// their parts, the optimizer step its kernels; a generic layer list keeps the roofline. The
// expected lists are built here from transformer_kernels' public functions with the settings the
// scenario states, not read back from the plan.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "models/compute_model.hpp"
#include "models/kernels/kernel_cost.hpp"
#include "models/kernels/transformer_kernels.hpp"
#include "models/plans/training_schedule.hpp"
#include "models/scenario.hpp"

namespace clustersim::models {
namespace {

using engine::Category;
using engine::Kernel;
using engine::kNone;
using engine::Op;
using engine::OpKind;
using kernels::Pass;

// A GPT-style transformer on `gpus` GPUs of a DGX A100 (one pipeline stage unless said).
std::string gpt(int layers, const std::string& training_extra = "",
                const std::string& parallel = "{tp: 2}", int gpus = 2,
                const std::string& node = "dgx-a100") {
  return "cluster: {nodes: 1, node: " + node + ", gpus_per_node: " + std::to_string(gpus) +
         "}\n"
         "model: {num_layers: " +
         std::to_string(layers) +
         ", hidden_size: 1024, num_heads: 16, vocab_size: 32768}\n"
         "training: {global_batch: 4, micro_batch: 2, seq_len: 1024" +
         training_extra +
         "}\n"
         "parallel: " +
         parallel + "\n";
}

BuiltSchedule build(const std::string& text, const std::vector<std::string>& overrides = {}) {
  return build_schedule(parse_scenario(text, "t.yaml", overrides));
}

std::vector<Kernel> list_of(const engine::Schedule& s, const Op& op) {
  const auto span = s.kernels.list(op.kernels);
  return {span.begin(), span.end()};
}

// The first op of rank 0 whose name is `name` (names carry no micro-batch).
Op op_named(const engine::Schedule& s, const std::string& name) {
  for (const Op& op : s.ops)
    if (op.rank == 0 && s.name_of(op) == name) return op;
  throw std::runtime_error("no op " + name);
}

// The configuration the scenario's text states: hidden 1024, 16 heads, vocab 32768, micro-batch
// 2, seq 1024, tp 2, bf16, flash (bf16 on an A100), fused kernels, causal.
kernels::TransformerKernelConfig stated_config(int tp = 2) {
  kernels::TransformerKernelConfig c;
  c.micro_batch = 2;
  c.seq = 1024;
  c.hidden = 1024;
  c.heads = 16;
  c.kv_heads = 16;
  c.ffn = 4096;
  c.vocab = 32768;
  c.tp = tp;
  c.attention = kernels::AttentionImpl::flash;
  c.dtype = Precision::bf16;
  return c;
}

std::vector<Kernel> expected(std::vector<Kernel> (*make)(const kernels::TransformerKernelConfig&,
                                                         Pass, engine::KernelTable&),
                             const kernels::TransformerKernelConfig& c, Pass pass,
                             engine::KernelTable& names) {
  return make(c, pass, names);
}

// Kernels compare by shape, bytes and name text (the tables intern names separately).
void expect_same(const std::vector<Kernel>& got, const engine::KernelTable& got_names,
                 const std::vector<Kernel>& want, const engine::KernelTable& want_names) {
  ASSERT_EQ(got.size(), want.size());
  for (std::size_t i = 0; i < got.size(); ++i) {
    Kernel a = got[i], b = want[i];
    EXPECT_EQ(got_names.name_of(a.name), want_names.name_of(b.name)) << i;
    a.name = b.name = 0;
    EXPECT_TRUE(a == b) << i << " " << got_names.name_of(got[i].name);
  }
}

TEST(LayerKernels, EveryTransformerComputeOpNamesItsList) {
  const BuiltSchedule b = build(gpt(4));
  const auto& s = b.schedule;
  int compute = 0;
  for (const Op& op : s.ops) {
    if (op.kind != OpKind::compute) continue;
    ++compute;
    EXPECT_NE(op.kernels, kNone) << s.label(op);
  }
  EXPECT_GT(compute, 0);

  engine::KernelTable names;
  const auto c = stated_config();
  expect_same(list_of(s, op_named(s, "L0.attn fwd")), s.kernels,
              expected(kernels::attention_block_kernels, c, Pass::forward, names), names);
  // A backward whose input gradient is reduced asynchronously runs as two ops (up to the data
  // gradient; the weight gradient beside the reduction, and the rest): the whole list, in order.
  const auto backward = [&](const std::string& base) {
    std::vector<Kernel> all;
    for (const char* part : {"", " wgrad"})
      for (const Op& op : s.ops)
        if (s.name_of(op) == base + part) {
          const auto list = list_of(s, op);
          all.insert(all.end(), list.begin(), list.end());
          break;
        }
    return all;
  };
  expect_same(backward("L3.mlp bwd"), s.kernels,
              expected(kernels::mlp_block_kernels, c, Pass::backward, names), names);
  expect_same(list_of(s, op_named(s, "embedding fwd")), s.kernels,
              expected(kernels::embedding_kernels, c, Pass::forward, names), names);
  expect_same(backward("lm_head bwd"), s.kernels,
              expected(kernels::lm_head_kernels, c, Pass::backward, names), names);
}

TEST(LayerKernels, IdenticalLayersShareOneList) {
  const BuiltSchedule four = build(gpt(4));
  const BuiltSchedule twelve = build(gpt(12));
  EXPECT_EQ(four.schedule.kernels.size(), twelve.schedule.kernels.size());
  const auto& s = twelve.schedule;
  EXPECT_EQ(op_named(s, "L0.attn fwd").kernels, op_named(s, "L11.attn fwd").kernels);
  EXPECT_NE(op_named(s, "L0.attn fwd").kernels, op_named(s, "L0.mlp fwd").kernels);
  // Every micro-batch and rank names the same list.
  std::set<std::uint32_t> attn;
  for (const Op& op : s.ops)
    if (s.name_of(op) == "L5.attn fwd") attn.insert(op.kernels);
  EXPECT_EQ(attn.size(), 1u);
}

TEST(LayerKernels, RecomputeRunsTheForwardListOrTheAttentionCore) {
  const BuiltSchedule full = build(gpt(2, ", recompute: full"));
  const auto& f = full.schedule;
  EXPECT_EQ(op_named(f, "L1.attn recompute").kernels, op_named(f, "L1.attn fwd").kernels);
  EXPECT_EQ(op_named(f, "L1.mlp recompute").kernels, op_named(f, "L1.mlp fwd").kernels);

  const BuiltSchedule selective = build(gpt(2, ", recompute: selective"));
  const auto& s = selective.schedule;
  engine::KernelTable names;
  expect_same(list_of(s, op_named(s, "L0.attn recompute")), s.kernels,
              expected(kernels::attention_core_kernels, stated_config(), Pass::forward, names),
              names);
  ASSERT_EQ(list_of(s, op_named(s, "L0.attn recompute")).size(), 1u);  // the flash kernel
}

TEST(LayerKernels, AttentionDefaultsToFlashOnAmpereAndLaterInSixteenBits) {
  auto attention_kernel = [](const BuiltSchedule& b) {
    const auto& s = b.schedule;
    const auto list = list_of(s, op_named(s, "L0.attn fwd"));
    for (const Kernel& k : list) {
      const std::string& name = s.kernels.name_of(k.name);
      if (name == "attn.flash.fwd" || name == "attn.qk.fprop") return name;
    }
    return std::string("none");
  };
  EXPECT_EQ(attention_kernel(build(gpt(1))), "attn.flash.fwd");  // A100, bf16
  EXPECT_EQ(attention_kernel(build(gpt(1, ", precision: fp16", "{tp: 2}", 2, "dgx-h100"))),
            "attn.flash.fwd");
  EXPECT_EQ(attention_kernel(build(gpt(1, ", precision: fp32"))), "attn.qk.fprop");
  EXPECT_EQ(attention_kernel(build(gpt(1, ", attention: standard"))), "attn.qk.fprop");
  // V100: FlashAttention-2 has no Volta kernel; fp16 is its tensor-core precision.
  const std::string v100 =
      "cluster: {nodes: 1, gpus_per_node: 2, gpu: V100-SXM2-32GB}\n"
      "model: {num_layers: 1, hidden_size: 1024, num_heads: 16, vocab_size: 32768}\n"
      "training: {global_batch: 4, micro_batch: 2, seq_len: 1024, precision: fp16}\n"
      "parallel: {tp: 2}\n";
  EXPECT_EQ(parse_scenario(v100, "t.yaml").training.attention, Attention::standard);
  EXPECT_EQ(attention_kernel(build(v100)), "attn.qk.fprop");
  EXPECT_EQ(parse_scenario(gpt(1), "t.yaml").training.attention, Attention::flash);
}

TEST(LayerKernels, UnfusedKernelsLaunchMore) {
  const BuiltSchedule fused = build(gpt(1, ", attention: standard"));
  const BuiltSchedule eager = build(gpt(1, ", attention: standard, fused_kernels: false"));
  const auto count = [](const BuiltSchedule& b, const char* name) {
    return list_of(b.schedule, op_named(b.schedule, name)).size();
  };
  // Megatron's fused scale-mask-softmax becomes scale, mask, softmax; bias-dropout-add three ops.
  EXPECT_EQ(count(eager, "L0.attn fwd"), count(fused, "L0.attn fwd") + 2 + 2);
}

TEST(LayerKernels, MoeOpsCarryTheirParts) {
  // 8 experts, top-2, ep 2 on 2 GPUs, one shared expert.
  const std::string text =
      "cluster: {nodes: 1, node: dgx-h100, gpus_per_node: 2}\n"
      "model: {num_layers: 2, hidden_size: 1024, num_heads: 16, num_kv_heads: 4, "
      "ffn_hidden_size: 2816, vocab_size: 32000, activation: swiglu, norm: rmsnorm, bias: false,\n"
      "        learned_positions: false,\n"
      "        moe: {num_experts: 8, top_k: 2, expert_ffn_hidden_size: 1408, shared_experts: 1}}\n"
      "training: {global_batch: 4, micro_batch: 2, seq_len: 1024}\n"
      "parallel: {ep: 2}\n";
  const BuiltSchedule b = build(text);
  const auto& s = b.schedule;
  for (const char* name : {"L0.mlp fwd router", "L0.mlp fwd experts", "L0.mlp fwd shared experts",
                           "L1.mlp bwd router", "L1.mlp bwd experts", "L1.mlp bwd shared experts"})
    EXPECT_NE(op_named(s, name).kernels, kNone) << name;
  // The pace-setting rank's 4 experts share its 2 · 2048 · 2 token copies (ep 2, balanced).
  const auto experts = list_of(s, op_named(s, "L0.mlp fwd experts"));
  const Kernel& fc1 = experts.front();
  EXPECT_EQ(s.kernels.name_of(fc1.name), "moe.experts.fc1.fprop");
  EXPECT_EQ(fc1.batch, 4u);
  EXPECT_EQ(fc1.m, 2048u * 2 / 4);
  EXPECT_EQ(fc1.n, 2u * 1408);  // gate and up
  EXPECT_EQ(fc1.k, 1024u);
  // Router, experts and shared experts back to back are the whole MoE block.
  auto c = stated_config(1);
  c.kv_heads = 4;
  c.ffn = 2816;
  c.vocab = 32000;
  c.activation = Activation::swiglu;
  c.norm = Norm::rmsnorm;
  c.bias = false;
  c.learned_positions = false;
  c.dropout = false;
  c.num_experts = 8;
  c.local_experts = 4;
  c.top_k = 2;
  c.expert_ffn = 1408;
  c.shared_experts = 1;
  c.tokens_per_expert = 2048.0 * 2 / 4;
  engine::KernelTable names;
  std::vector<Kernel> whole;
  for (const char* name :
       {"L0.mlp fwd router", "L0.mlp fwd experts", "L0.mlp fwd shared experts"}) {
    const auto part = list_of(s, op_named(s, name));
    whole.insert(whole.end(), part.begin(), part.end());
  }
  expect_same(whole, s.kernels, kernels::mlp_block_kernels(c, Pass::forward, names), names);
}

TEST(LayerKernels, OptimizerStepLaunchesTheOptimizerKernels) {
  const BuiltSchedule b = build(gpt(2));
  const auto& s = b.schedule;
  const Op step = op_named(s, "optimizer step");
  ASSERT_NE(step.kernels, kNone);
  const auto list = list_of(s, step);
  // Adam over the rank's parameters: 7 fp32 words per parameter in the fused Adam pass.
  double adam = 0;
  for (const Kernel& k : list)
    if (s.kernels.name_of(k.name) == "optimizer.adam") adam += k.bytes;
  EXPECT_DOUBLE_EQ(adam, 7 * 4 * s.flops(step) / 10);  // the op's FLOPs are 10 per parameter
}

TEST(LayerKernels, ResNet50PresetHasKernelsOtherLayerListsKeepTheRoofline) {
  const BuiltSchedule resnet = build(
      "cluster: {nodes: 1, node: dgx-a100, gpus_per_node: 2}\nmodel: resnet50\n"
      "training: {global_batch: 64, micro_batch: 32}\n");
  const auto& r = resnet.schedule;
  const auto conv1 = list_of(r, op_named(r, "conv1 fwd"));
  EXPECT_EQ(r.kernels.name_of(conv1.front().name), "conv1.conv.fprop");
  EXPECT_EQ(conv1.front().m, 32u * 112 * 112);  // N·P·Q of the 7×7/2 stem
  EXPECT_NE(op_named(r, "layer4.2 bwd").kernels, kNone);

  const BuiltSchedule generic = build(
      "cluster: {nodes: 1, node: dgx-a100, gpus_per_node: 2}\n"
      "model: {layers: [{name: block, params: 1e6, forward_flops: 1e9, activation_bytes: 1MB, "
      "repeat: 3}]}\n"
      "training: {global_batch: 4}\n");
  for (const Op& op : generic.schedule.ops) {
    if (op.kind == OpKind::compute && op.category != Category::optimizer) {
      EXPECT_EQ(op.kernels, kNone) << generic.schedule.label(op);
    }
  }
}

TEST(LayerKernels, ComputeModelCostsListsOnKernelGpusAndTheRooflineElsewhere) {
  const BuiltSchedule b = build(gpt(2));
  const auto& s = b.schedule;
  const GpuSpec& a100 = *find_gpu("A100-SXM4-80GB");
  const RooflineComputeModel model(a100);
  const auto lists = model.kernel_list_durations(s.kernels);
  ASSERT_EQ(lists.size(), s.kernels.size());
  const Op attn = op_named(s, "L0.attn fwd");
  EXPECT_EQ(lists[attn.kernels], engine::Time::from_seconds(
                                     kernels::kernels_seconds(s.kernels.list(attn.kernels), a100)));
  // Without kernel figures (peaks and bandwidth only) there is nothing to cost kernels with.
  GpuSpec plain;
  plain.name = "plain";
  plain.peak_flops[static_cast<std::size_t>(Precision::bf16)] = 312e12;
  plain.hbm_bandwidth = 2e12;
  EXPECT_TRUE(RooflineComputeModel(plain).kernel_list_durations(s.kernels).empty());
  EXPECT_FALSE(RooflineComputeModel(plain).costs_kernels());
}

}  // namespace
}  // namespace clustersim::models
