// Megatron-LLaMA's kernel mix (docs/fidelity-cases.md "Megatron-LLaMA's kernel mix"):
// FlashAttention 1, eager SwiGLU and RoPE beside a fused RMSNorm, weight gradients accumulated by a
// separate add. Every expected figure is worked by hand from the LLaMA-13B shape Megatron-LLaMA's
// example script runs (b = 4, s = 2048, h = 5120, 40 heads, f = 13824, TP 2, bf16).
#include <gtest/gtest.h>

#include <string>

#include "engine/kernels.hpp"
#include "models/hardware.hpp"
#include "models/kernels/kernel_cost.hpp"
#include "models/kernels/saved_tensors.hpp"
#include "models/kernels/transformer_kernels.hpp"
#include "models/scenario.hpp"
#include "models/scenario_detail.hpp"

namespace clustersim::models::kernels {
namespace mll_kernel_keys {

constexpr double kT = 4.0 * 2048;        // tokens of a micro-batch
constexpr double kHLocal = 5120.0 / 2;   // q (and k, v) width on a rank
constexpr double kFLocal = 13824.0 / 2;  // SwiGLU's f on a rank
constexpr double kBf16 = 2;

TransformerKernelConfig llama13b_tp2() {
  TransformerKernelConfig c;
  c.micro_batch = 4;
  c.seq = 2048;
  c.hidden = 5120;
  c.heads = 40;
  c.ffn = 13824;
  c.vocab = 32000;
  c.activation = Activation::swiglu;
  c.norm = Norm::rmsnorm;
  c.bias = false;
  c.dropout = false;
  c.learned_positions = false;
  c.tp = 2;
  c.sequence_parallel = true;
  c.attention = AttentionImpl::flash;
  return c;
}

double bytes(const std::vector<engine::Kernel>& list) {
  double sum = 0;
  for (const auto& k : list)
    sum += k.bytes;
  return sum;
}

double bytes_named(const std::vector<engine::Kernel>& list, const engine::KernelTable& names,
                   const std::string& suffix) {
  double sum = 0;
  for (const auto& k : list)
    if (names.name_of(k.name).ends_with(suffix)) sum += k.bytes;
  return sum;
}

const engine::Kernel& named(const std::vector<engine::Kernel>& list,
                            const engine::KernelTable& names, const std::string& name) {
  for (const auto& k : list)
    if (names.name_of(k.name) == name) return k;
  throw std::runtime_error("no kernel " + name);
}

TEST(KernelImplKeys, EagerSwigluAddsItsElementwiseTrafficOnly) {
  engine::KernelTable names;
  TransformerKernelConfig fused = llama13b_tp2();
  TransformerKernelConfig eager = fused;
  eager.eager_families = family_bit(KernelFamily::activation);
  const double out = kT * kFLocal * kBf16;  // silu(gate) · up, one f-wide bf16 tensor
  for (const Pass pass : {Pass::forward, Pass::backward}) {
    const auto f = mlp_block_kernels(fused, pass, names);
    const auto e = mlp_block_kernels(eager, pass, names);
    // Forward: silu (read gate, write) + mul (read both, write) = 5 out against the fused 3.
    // Backward: two mul grads (3 out each), silu grad (3), chunk's cat (4) = 13 against 5.
    const double extra = pass == Pass::forward ? 2 * out : 8 * out;
    EXPECT_DOUBLE_EQ(bytes(e) - bytes(f), extra);
    EXPECT_EQ(e.size() - f.size(), pass == Pass::forward ? 1u : 3u);
  }
  // The eager product saves silu's output beside fc1's: one more f-wide tensor.
  EXPECT_DOUBLE_EQ(saved_bytes(mlp_block_saved(eager)) - saved_bytes(mlp_block_saved(fused)), out);
  // The norm stays apex's fused kernel: no fp32 copy of its input is saved.
  EXPECT_DOUBLE_EQ(saved_bytes(attention_block_saved(eager)),
                   saved_bytes(attention_block_saved(fused)));
}

TEST(KernelImplKeys, EagerRopeRunsFourKernelsPerTensorBesideAFusedNorm) {
  engine::KernelTable names;
  TransformerKernelConfig fused = llama13b_tp2();
  TransformerKernelConfig eager = fused;
  eager.eager_families = family_bit(KernelFamily::rope);
  const double q = kT * kHLocal * kBf16, k = q;  // MHA: k as wide as q
  const double tables = 2 * 2048.0 * 128 * 4;    // fp32 cos and sin, s × head dim
  // Fused: read and write q and k once, read the tables. Eager, per tensor: x·cos (2x + half
  // the tables), rotate_half (2x), ·sin (2x + half), add (3x): 9x, and the tables once each.
  const double extra = 9 * (q + k) + 2 * tables - (2 * (q + k) + tables);
  const auto f = attention_block_kernels(fused, Pass::forward, names);
  const auto e = attention_block_kernels(eager, Pass::forward, names);
  EXPECT_DOUBLE_EQ(bytes(e) - bytes(f), extra);
  EXPECT_DOUBLE_EQ(bytes_named(e, names, "attn.norm.fwd"), bytes_named(f, names, "attn.norm.fwd"));
}

TEST(KernelImplKeys, UnfusedGradientAccumulationAddsOneKernelPerWeight) {
  engine::KernelTable names;
  TransformerKernelConfig fused = llama13b_tp2();
  TransformerKernelConfig unfused = fused;
  unfused.gradient_accumulation_fusion = false;
  unfused.main_grad_bytes = 4;  // Megatron's fp32 main_grad
  // Per parameter: read the bf16 gradient and the fp32 main_grad, write main_grad: 2 + 4 + 4.
  const double per_param = kBf16 + 2 * 4;
  const double attn_params = 3 * kHLocal * 5120 + 5120 * kHLocal;  // QKV and out-proj shards
  const double mlp_params = 2 * kFLocal * 5120 + 5120 * kFLocal;   // gate+up and down shards
  const auto ab = attention_block_kernels(unfused, Pass::backward, names);
  const auto mb = mlp_block_kernels(unfused, Pass::backward, names);
  EXPECT_DOUBLE_EQ(bytes_named(ab, names, ".wgrad_accumulate"), attn_params * per_param);
  EXPECT_DOUBLE_EQ(bytes_named(mb, names, ".wgrad_accumulate"), mlp_params * per_param);
  EXPECT_DOUBLE_EQ(bytes(ab) - bytes(attention_block_kernels(fused, Pass::backward, names)),
                   attn_params * per_param);
  // The forward does not change.
  EXPECT_EQ(attention_block_kernels(unfused, Pass::forward, names),
            attention_block_kernels(fused, Pass::forward, names));
}

// DeepSpeed's BF16_Optimizer (deepspeed/runtime/bf16_optimizer.py update_hp_grads at
// 56c522386) runs `hp_grad.add_(lp.grad.to(fp32))` after each backward: the cast reads the bf16
// gradient and writes an fp32 copy (2 + 4 B a parameter), the add reads that copy and the fp32
// gradient and writes the latter (4 + 4 + 4 B): 18 B, 8 B more than a fused add's 2 + 4 + 4. On an
// A100-SXM4-80GB each kernel streams its bytes at hbm_bandwidth · memory_efficiency, so the
// block's backward grows by 8 B · params / that rate.
TEST(KernelImplKeys, Bf16OptimizersCastThenAddReadsAndWritesEighteenBytesAParameter) {
  engine::KernelTable names;
  TransformerKernelConfig fused_add = llama13b_tp2();
  fused_add.gradient_accumulation_fusion = false;
  fused_add.main_grad_bytes = 4;
  TransformerKernelConfig cast = fused_add;
  cast.cast_main_grad = true;
  const double attn_params = 3 * kHLocal * 5120 + 5120 * kHLocal;
  const double mlp_params = 2 * kFLocal * 5120 + 5120 * kFLocal;
  const GpuSpec* a100 = find_gpu("A100-SXM4-80GB");
  ASSERT_NE(a100, nullptr);
  const double rate = a100->hbm_bandwidth * a100->memory_efficiency;
  for (const auto& [make, params] : {std::pair{&attention_block_kernels, attn_params},
                                     std::pair{&mlp_block_kernels, mlp_params}}) {
    const auto with_cast = make(cast, Pass::backward, names);
    EXPECT_DOUBLE_EQ(bytes_named(with_cast, names, ".wgrad_accumulate.cast"), params * (2 + 4));
    EXPECT_DOUBLE_EQ(bytes_named(with_cast, names, ".wgrad_accumulate"), params * (4 + 4 + 4));
    const auto without = make(fused_add, Pass::backward, names);
    EXPECT_DOUBLE_EQ(bytes(with_cast) - bytes(without), params * 8);
    double seconds = 0;
    for (const auto& k : with_cast)
      if (names.name_of(k.name).find(".wgrad_accumulate") != std::string::npos)
        seconds += kernel_seconds(k, *a100);
    EXPECT_NEAR(seconds, params * 18 / rate, 1e-12);
    // The forward does not change.
    EXPECT_EQ(make(cast, Pass::forward, names), make(fused_add, Pass::forward, names));
  }
}

TEST(KernelImplKeys, FlashAttention1RunsAtHalfFlashAttention2sRate) {
  const GpuSpec* a100 = find_gpu("A100-SXM4-80GB");
  ASSERT_NE(a100, nullptr);
  GpuSpec isolated = *a100;
  isolated.sustained_compute_fraction = 1;  // the paper's isolated-kernel benchmark
  engine::KernelTable names;
  TransformerKernelConfig v2 = llama13b_tp2();
  TransformerKernelConfig v1 = v2;
  v1.attention = AttentionImpl::flash1;
  double v1_time = 0, v2_time = 0, flops = 0;
  for (const Pass pass : {Pass::forward, Pass::backward}) {
    const std::string tag = pass == Pass::forward ? ".fwd" : ".bwd";
    const auto k1 = attention_core_kernels(v1, pass, names);
    const auto k2 = attention_core_kernels(v2, pass, names);
    const engine::Kernel& a1 = named(k1, names, "attn.flash1" + tag);
    const engine::Kernel& a2 = named(k2, names, "attn.flash" + tag);
    EXPECT_TRUE(is_flash1(a1));
    EXPECT_FALSE(is_flash1(a2));
    EXPECT_EQ(a1.flops, a2.flops);  // the same work
    // Dao 2023 (arXiv:2307.08691), abstract: FlashAttention-2 is "around 2x" FlashAttention.
    EXPECT_NEAR(kernel_seconds(a1, isolated) / kernel_seconds(a2, isolated), 2.0, 1e-12);
    v1_time += kernel_seconds(a1, isolated);
    v2_time += kernel_seconds(a2, isolated);
    flops += a1.flops;
  }
  // Forward + backward against the A100's 312 TFLOP/s: the abstract's bands, FlashAttention
  // 25-40 %, FlashAttention-2 50-73 %.
  const double peak = 312e12;
  EXPECT_GE(flops / v1_time / peak, 0.25);
  EXPECT_LE(flops / v1_time / peak, 0.40);
  EXPECT_GE(flops / v2_time / peak, 0.50);
  EXPECT_LE(flops / v2_time / peak, 0.73);
}

TEST(KernelImplKeys, FlashAttention1TransposesBetweenSeqAndBatchMajor) {
  engine::KernelTable names;
  TransformerKernelConfig v2 = llama13b_tp2();
  TransformerKernelConfig v1 = v2;
  v1.attention = AttentionImpl::flash1;
  const double t = kT * kHLocal * kBf16;  // q, k, v and the output are each this large
  // q, k, v to [b, s, ...] and the output back: read and write each, forward and backward.
  for (const Pass pass : {Pass::forward, Pass::backward})
    EXPECT_DOUBLE_EQ(bytes(attention_core_kernels(v1, pass, names)) -
                         bytes(attention_core_kernels(v2, pass, names)),
                     2 * (3 * t) + 2 * t);
  // The projection keeps the [s, b, h] copy, the kernel its own output.
  EXPECT_DOUBLE_EQ(saved_bytes(attention_block_saved(v1)) - saved_bytes(attention_block_saved(v2)),
                   t);
  // At micro-batch 1 the rearranges are views: no copy.
  v1.micro_batch = v2.micro_batch = 1;
  EXPECT_DOUBLE_EQ(bytes(attention_core_kernels(v1, Pass::forward, names)),
                   bytes(attention_core_kernels(v2, Pass::forward, names)));
}

// The scenario keys. Lines of the snippet are counted by hand.
std::string scenario(const std::string& training_extra) {
  return "name: t\n"                              // 1
         "cluster: {nodes: 1, node: dgx-a100}\n"  // 2
         "model: llama2-7b\n"                     // 3
         "training:\n"                            // 4
         "  global_batch: 8\n"                    // 5
         + training_extra;                        // 6
}

void expect_scenario_error(const std::string& extra, const std::string& where,
                           const std::string& key, const std::string& fragment) {
  try {
    parse_scenario(scenario(extra), "bad.yaml");
    ADD_FAILURE() << "accepted: " << extra;
  } catch (const ScenarioError& e) {
    const std::string message = e.what();
    EXPECT_TRUE(message.starts_with(where)) << message;
    EXPECT_NE(message.find(": " + key + ": "), std::string::npos) << message;
    EXPECT_NE(message.find(fragment), std::string::npos) << message;
  }
}

TEST(KernelImplKeys, ScenarioKeysParseAndDefaultToToday) {
  const Scenario plain = parse_scenario(scenario(""), "ok.yaml");
  EXPECT_TRUE(plain.training.fused_kernels);
  EXPECT_EQ(plain.training.eager_families, 0);
  EXPECT_TRUE(plain.training.gradient_accumulation_fusion);
  const Scenario mll =
      parse_scenario(scenario("  attention: flash1\n  gradient_accumulation_fusion: false\n"
                              "  fused_kernels: {norm: true, activation: false, rope: false}\n"),
                     "ok.yaml");
  EXPECT_EQ(mll.training.attention, Attention::flash1);
  EXPECT_FALSE(mll.training.gradient_accumulation_fusion);
  EXPECT_TRUE(mll.training.fused_kernels);
  EXPECT_EQ(mll.training.eager_families,
            family_bit(KernelFamily::activation) | family_bit(KernelFamily::rope));
}

TEST(KernelImplKeys, BadValuesNameFileLineAndKey) {
  expect_scenario_error("  fused_kernels: {rop: false}\n",
                        "bad.yaml:6:", "training.fused_kernels.rop", "did you mean 'rope'");
  expect_scenario_error("  fused_kernels: {rope: maybe}\n",
                        "bad.yaml:6:", "training.fused_kernels.rope", "true");
  // A word that is neither a bool nor a map says both forms.
  expect_scenario_error("  fused_kernels: some\n", "bad.yaml:6:", "training.fused_kernels",
                        "allowed: true | false, or a map of kernel families");
  expect_scenario_error("  attention: flash2\n", "bad.yaml:6:", "training.attention", "flash1");
  expect_scenario_error("  gradient_accumulation_fusion: yes\n",
                        "bad.yaml:6:", "training.gradient_accumulation_fusion", "false");
  // FlashAttention 1 has no fp32 kernel either; the error names the attention key's line.
  expect_scenario_error("  precision: fp32\n  attention: flash1\n",
                        "bad.yaml:7:", "training.attention", "no fp32 kernel");
}

}  // namespace mll_kernel_keys
}  // namespace clustersim::models::kernels
