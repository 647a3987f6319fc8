// Kernel lists against the closed-form FLOPs the project already uses (models/model_costs.cpp:
// 24·b·s·h² + 4·b·s²·h per GPT layer, generalized to GQA and SwiGLU; backward twice forward) and
// models/resnet50.cpp's per-layer FLOPs.
#include <gtest/gtest.h>

#include <cstdio>
#include <set>
#include <stdexcept>
#include <variant>

#include "models/hardware.hpp"
#include "models/kernels/gemm_model.hpp"
#include "models/kernels/kernel_cost.hpp"
#include "models/kernels/resnet50_kernels.hpp"
#include "models/kernels/transformer_kernels.hpp"
#include "models/model_costs.hpp"
#include "models/model_spec.hpp"

namespace clustersim::models::kernels {
namespace {

const ModelSpec& model(const char* name) {
  const ModelSpec* m = find_model(name);
  if (m == nullptr) throw std::runtime_error(std::string("no model preset ") + name);
  return *m;
}

const LayerCost& layer(const std::vector<LayerCost>& layers, const std::string& name) {
  for (const auto& l : layers)
    if (l.name == name) return l;
  throw std::runtime_error("no layer " + name);
}

struct FlopCase {
  const char* preset;
  long micro_batch;
  int tp;
};

// Forward GEMM + attention FLOPs of one rank × t = the closed form × micro-batch, exactly,
// counting the full s² (causal = false, as the closed form does). Backward: 2× with standard
// attention; with flash, 2× plus the recomputed Q·Kᵀ (0.5 × the attention forward).
void check_layer_flops(const FlopCase& fc) {
  const ModelSpec& m = model(fc.preset);
  const auto& spec = std::get<TransformerSpec>(m.body);
  const int seq = m.default_seq_len;
  const auto costs = expand_model(m, seq);
  const LayerCost& attn = layer(costs, "L0.attn");
  const LayerCost& mlp = layer(costs, "L0.mlp");
  const double b = static_cast<double>(fc.micro_batch);
  const double t = fc.tp;
  const double attention_core =
      4.0 * static_cast<double>(seq) * seq * static_cast<double>(spec.hidden_size) * b;

  engine::KernelTable names;
  TransformerKernelConfig c = kernel_config(spec, fc.micro_batch, seq, fc.tp);
  c.causal = false;
  for (AttentionImpl impl : {AttentionImpl::standard, AttentionImpl::flash}) {
    c.attention = impl;
    const double fwd_attn = gemm_flops(attention_block_kernels(c, Pass::forward, names));
    const double fwd_mlp = gemm_flops(mlp_block_kernels(c, Pass::forward, names));
    EXPECT_DOUBLE_EQ(fwd_attn * t, attn.forward_flops * b) << fc.preset;
    EXPECT_DOUBLE_EQ(fwd_mlp * t, mlp.forward_flops * b) << fc.preset;
    const double bwd_attn = gemm_flops(attention_block_kernels(c, Pass::backward, names));
    const double bwd_mlp = gemm_flops(mlp_block_kernels(c, Pass::backward, names));
    const double recompute = impl == AttentionImpl::flash ? 0.5 * attention_core : 0.0;
    EXPECT_DOUBLE_EQ(bwd_attn * t, attn.backward_flops * b + recompute) << fc.preset;
    EXPECT_DOUBLE_EQ(bwd_mlp * t, mlp.backward_flops * b) << fc.preset;
    const double layer_fwd = gemm_flops(transformer_layer_kernels(c, Pass::forward, names));
    EXPECT_DOUBLE_EQ(layer_fwd * t, (attn.forward_flops + mlp.forward_flops) * b);
  }
  // A causal mask halves what the fused kernel computes.
  c.attention = AttentionImpl::flash;
  c.causal = true;
  EXPECT_DOUBLE_EQ(gemm_flops(attention_block_kernels(c, Pass::forward, names)) * t,
                   attn.forward_flops * b - attention_core / 2);
  // The LM head's logits GEMM: 2·s·h·V per sample.
  EXPECT_DOUBLE_EQ(gemm_flops(lm_head_kernels(c, Pass::forward, names)) * t,
                   layer(costs, "lm_head").forward_flops * b);
  EXPECT_DOUBLE_EQ(gemm_flops(lm_head_kernels(c, Pass::backward, names)) * t,
                   layer(costs, "lm_head").backward_flops * b);
  EXPECT_DOUBLE_EQ(gemm_flops(embedding_kernels(c, Pass::forward, names)), 0.0);
}

TEST(TransformerKernels, Gpt3LayerFlopsMatchTheClosedForm) {
  // 24·b·s·h² + 4·b·s²·h, explicitly, for GPT-3 175B (h = 12288, s = 2048).
  const double h = 12288, s = 2048;
  const auto costs = expand_model(model("gpt3-175b"), 2048);
  EXPECT_DOUBLE_EQ(layer(costs, "L0.attn").forward_flops + layer(costs, "L0.mlp").forward_flops,
                   24 * s * h * h + 4 * s * s * h);
  check_layer_flops({"gpt3-175b", 1, 8});
  check_layer_flops({"gpt3-175b", 2, 1});
}

TEST(TransformerKernels, LlamaLayerFlopsMatchTheClosedForm) {
  check_layer_flops({"llama2-70b", 1, 8});  // GQA (8 kv heads), SwiGLU, no biases, rotary
  check_layer_flops({"llama3-8b", 2, 2});
  check_layer_flops({"llama2-7b", 1, 1});
}

// Under fp8 training the transformer layers' GEMMs run fp8 (each input cast by a kernel of its
// own) and the LM head's stay bf16, uncast: Megatron-Core's output layer is a plain
// ColumnParallelLinear outside Transformer Engine's fp8 context (gpt_model.py).
TEST(TransformerKernels, UnderFp8OnlyTheLayersGemmsRunFp8NotTheLmHead) {
  const auto& spec = std::get<TransformerSpec>(model("llama3-8b").body);
  engine::KernelTable names;
  TransformerKernelConfig c = kernel_config(spec, 1, 8192, 1);
  c.dtype = Precision::fp8;
  auto gemm_dtypes = [&](const std::vector<engine::Kernel>& ks, int& casts) {
    std::set<int> dtypes;
    casts = 0;
    for (const auto& k : ks) {
      const std::string& n = names.names()[k.name];
      if (k.kind == engine::KernelKind::gemm) dtypes.insert(k.dtype);
      if (n.find(".cast_") != std::string::npos) ++casts;
    }
    return dtypes;
  };
  const int fp8 = static_cast<int>(Precision::fp8), bf16 = static_cast<int>(Precision::bf16);
  for (Pass pass : {Pass::forward, Pass::backward}) {
    int casts = 0;
    EXPECT_EQ(gemm_dtypes(mlp_block_kernels(c, pass, names), casts), std::set<int>{fp8});
    EXPECT_GT(casts, 0);
    EXPECT_EQ(gemm_dtypes(lm_head_kernels(c, pass, names), casts), std::set<int>{bf16});
    EXPECT_EQ(casts, 0);
  }
}

TEST(TransformerKernels, MoeFlopsMatchTheClosedFormWithAnEvenRouter) {
  const ModelSpec& m = model("mixtral-8x7b");
  const auto& spec = std::get<TransformerSpec>(m.body);
  const auto costs = expand_model(m, 4096);
  engine::KernelTable names;
  const TransformerKernelConfig c = kernel_config(spec, 1, 4096, 1);
  EXPECT_DOUBLE_EQ(gemm_flops(mlp_block_kernels(c, Pass::forward, names)),
                   layer(costs, "L0.mlp").forward_flops);
  EXPECT_DOUBLE_EQ(gemm_flops(mlp_block_kernels(c, Pass::backward, names)),
                   layer(costs, "L0.mlp").backward_flops);
}

TEST(TransformerKernels, GemmShapesAndTransposes) {
  engine::KernelTable names;
  TransformerKernelConfig c;
  c.micro_batch = 2;
  c.seq = 1024;
  c.hidden = 4096;
  c.heads = 32;
  c.kv_heads = 8;
  c.ffn = 14336;
  c.vocab = 128256;
  c.activation = Activation::swiglu;
  c.norm = Norm::rmsnorm;
  c.bias = false;
  c.dropout = false;
  c.learned_positions = false;
  c.tp = 4;
  auto find = [&](const std::vector<engine::Kernel>& ks, const std::string& n) {
    for (const auto& k : ks)
      if (names.name_of(k.name) == n) return k;
    throw std::runtime_error("no kernel " + n);
  };
  const auto fwd = attention_block_kernels(c, Pass::forward, names);
  const auto qkv = find(fwd, "attn.qkv.fprop");  // m = b·s, n = (h + 2·kv)/t, k = h
  EXPECT_EQ(qkv.m, 2048u);
  EXPECT_EQ(qkv.n, (4096u + 2 * 1024) / 4);
  EXPECT_EQ(qkv.k, 4096u);
  EXPECT_TRUE(qkv.trans_b);
  const auto proj = find(fwd, "attn.proj.fprop");  // row-parallel: k = h/t
  EXPECT_EQ(proj.n, 4096u);
  EXPECT_EQ(proj.k, 1024u);
  find(fwd, "attn.rope");
  const auto bwd = attention_block_kernels(c, Pass::backward, names);
  const auto dgrad = find(bwd, "attn.qkv.dgrad");  // dX = dY·W: m = b·s, n = k_fwd, k = n_fwd
  EXPECT_EQ(dgrad.m, 2048u);
  EXPECT_EQ(dgrad.n, 4096u);
  EXPECT_EQ(dgrad.k, 1536u);
  const auto wgrad = find(bwd, "attn.qkv.wgrad");  // dW = dYᵀ·X: m = n_fwd, n = k_fwd, k = b·s
  EXPECT_EQ(wgrad.m, 1536u);
  EXPECT_EQ(wgrad.n, 4096u);
  EXPECT_EQ(wgrad.k, 2048u);
  EXPECT_TRUE(wgrad.trans_a);
  const auto mlp = mlp_block_kernels(c, Pass::forward, names);
  EXPECT_EQ(find(mlp, "mlp.fc1.fprop").n, 2u * 14336 / 4);  // gate and up fused
  EXPECT_EQ(find(mlp, "mlp.fc2.fprop").k, 14336u / 4);
  find(mlp, "mlp.swiglu");
  // Standard attention: batched QKᵀ over b·a/t (sequence, head) pairs, m = n = s, k = d.
  c.attention = AttentionImpl::standard;
  const auto std_fwd = attention_block_kernels(c, Pass::forward, names);
  const auto qk = find(std_fwd, "attn.qk.fprop");
  EXPECT_EQ(qk.batch, 2u * 32 / 4);
  EXPECT_EQ(qk.m, 1024u);
  EXPECT_EQ(qk.n, 1024u);
  EXPECT_EQ(qk.k, 128u);
  find(std_fwd, "attn.repeat_kv");  // GQA expands k, v for the batched GEMMs
  // Unfused kernels: more launches, more bytes.
  c.fused_kernels = false;
  const auto unfused = attention_block_kernels(c, Pass::forward, names);
  EXPECT_GT(unfused.size(), std_fwd.size());
}

TEST(TransformerKernels, OptimizerBytesPerParameter) {
  engine::KernelTable names;
  OptimizerKernelConfig o;
  o.params = 1e9;
  o.tensors = 72;
  const auto ks = optimizer_kernels(o, names);
  double adam = 0, all = 0;
  int adam_launches = 0;
  for (const auto& k : ks) {
    all += k.bytes;
    if (names.name_of(k.name) == "optimizer.adam") {
      adam += k.bytes;
      ++adam_launches;
    }
  }
  EXPECT_DOUBLE_EQ(adam, 28.0 * 1e9);  // read grad, param, m, v; write param, m, v (fp32)
  EXPECT_EQ(adam_launches, 2);         // 72 tensors, 36 per multi-tensor launch
  // + grad norm 4, clip 8, cast master → bf16 6, zero grad 4
  EXPECT_DOUBLE_EQ(all, (28.0 + 4 + 8 + 6 + 4) * 1e9);
  o.fused = false;
  double foreach_bytes = 0;
  for (const auto& k : optimizer_kernels(o, names))
    foreach_bytes += k.bytes;
  EXPECT_GT(foreach_bytes, all);
  const GpuSpec& a100 = *find_gpu("A100-SXM4-80GB");
  EXPECT_GT(kernels_seconds(optimizer_kernels(o, names), a100), kernels_seconds(ks, a100));
}

// models/resnet50.cpp's FLOPs per layer (2 × MACs of convs and fc) equal the implicit GEMMs'.
TEST(TransformerKernels, Resnet50ImplicitGemmsMatchTheLayerList) {
  const auto& list = std::get<std::vector<LayerSpec>>(model("resnet50").body);
  engine::KernelTable names;
  const long batch = 32;
  const auto layers = resnet50_kernels(batch, names);
  ASSERT_EQ(layers.size(), list.size());
  double total = 0;
  int convs = 0;
  for (std::size_t i = 0; i < list.size(); ++i) {
    EXPECT_EQ(layers[i].layer, list[i].name);
    const double fwd = gemm_flops(layers[i].forward);
    EXPECT_DOUBLE_EQ(fwd, list[i].forward_flops * batch) << list[i].name;
    // Backward: dgrad + wgrad = 2× forward, except conv1, whose input needs no gradient.
    const double bwd = gemm_flops(layers[i].backward);
    if (list[i].name == "conv1")
      EXPECT_DOUBLE_EQ(bwd, fwd) << list[i].name;
    else
      EXPECT_DOUBLE_EQ(bwd, 2 * fwd) << list[i].name;
    total += fwd;
    for (const auto& k : layers[i].forward)
      if (k.kind == engine::KernelKind::gemm) ++convs;
  }
  EXPECT_EQ(convs, 1 + 16 * 3 + 4 + 1);  // conv1, 48 bottleneck convs, 4 projections, fc
  EXPECT_DOUBLE_EQ(total, 2.0 * 4'089'184'256 * batch);  // torchvision's 4.09 G multiply-adds
}

// The report figure: GPT-3 175B layer GEMMs on A100 with TP 8, micro-batch 1, s = 2048.
TEST(TransformerKernels, Gpt3LayerOnA100Tp8Figures) {
  const auto& spec = std::get<TransformerSpec>(model("gpt3-175b").body);
  engine::KernelTable names;
  const auto c = kernel_config(spec, 1, 2048, 8);
  const GpuSpec& a100 = *find_gpu("A100-SXM4-80GB");
  const double peak = a100.peak_flops[static_cast<int>(Precision::bf16)];
  for (Pass pass : {Pass::forward, Pass::backward}) {
    const auto ks = transformer_layer_kernels(c, pass, names);
    double flops = 0;
    for (const auto& k : ks) {
      if (k.kind != engine::KernelKind::gemm) continue;
      const auto e = estimate_gemm({k.m, k.n, k.k, k.batch, Precision::bf16}, a100);
      std::printf("%-20s m=%6llu n=%6llu k=%6llu  %5.1f %% of peak, tile %dx%d, %.2f waves\n",
                  names.name_of(k.name).c_str(), static_cast<unsigned long long>(k.m),
                  static_cast<unsigned long long>(k.n), static_cast<unsigned long long>(k.k),
                  100 * e.efficiency, e.tile.tm, e.tile.tn, e.waves);
      EXPECT_GT(e.efficiency, 0.6);
      EXPECT_LT(e.efficiency, a100.gemm_max_efficiency);
      flops += k.flops;
    }
    const double seconds = kernels_seconds(ks, a100);
    std::printf("layer %s: %zu kernels, %.3f ms, %.1f %% of peak over all kernels\n",
                pass == Pass::forward ? "forward" : "backward", ks.size(), seconds * 1e3,
                100 * gemm_flops(ks) / seconds / peak);
    EXPECT_GT(flops, 0);
  }
}

}  // namespace
}  // namespace clustersim::models::kernels
