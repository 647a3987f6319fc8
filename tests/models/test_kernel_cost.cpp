// Kernel costs from closed forms: memory-bound kernels, the launch floor, the host launch bound,
// flash vs standard attention, and the interned kernel table.
#include <gtest/gtest.h>

#include <stdexcept>

#include "engine/kernels.hpp"
#include "models/hardware.hpp"
#include "models/kernels/kernel_cost.hpp"
#include "models/kernels/transformer_kernels.hpp"

namespace clustersim::models::kernels {
namespace {

using engine::Kernel;
using engine::KernelKind;

const GpuSpec& gpu(const char* name) {
  const GpuSpec* g = find_gpu(name);
  if (g == nullptr) throw std::runtime_error(std::string("no GPU preset ") + name);
  return *g;
}

Kernel memory_kernel(double bytes) {
  Kernel k;
  k.kind = KernelKind::memory;
  k.bytes = bytes;
  k.dtype = static_cast<std::uint8_t>(Precision::bf16);
  return k;
}

// A bf16 fused attention forward: `pairs` (sequence, head) pairs of `queries` × `keys` at head
// dimension `head_dim`.
Kernel bf16_attention_kernel(std::uint64_t queries, std::uint64_t keys, std::uint64_t head_dim,
                             std::uint64_t pairs, bool causal, double flops) {
  Kernel k;
  k.kind = KernelKind::attention_fwd;
  k.m = queries;
  k.n = keys;
  k.k = head_dim;
  k.batch = pairs;
  k.causal = causal;
  k.flops = flops;
  k.dtype = static_cast<std::uint8_t>(Precision::bf16);
  return k;
}

TEST(KernelCost, MemoryBoundKernelRunsAtAchievableBandwidth) {
  const GpuSpec& a100 = gpu("A100-SXM4-80GB");
  const double bytes = 1e9;
  EXPECT_DOUBLE_EQ(kernel_seconds(memory_kernel(bytes), a100),
                   bytes / (a100.hbm_bandwidth * a100.memory_efficiency));
  // HBM's rate does not follow the tensor cores' sustained share.
  GpuSpec throttled = a100;
  throttled.sustained_compute_fraction = 0.5;
  EXPECT_DOUBLE_EQ(kernel_seconds(memory_kernel(bytes), throttled),
                   kernel_seconds(memory_kernel(bytes), a100));
}

TEST(KernelCost, EveryKernelPaysTheLaunchFloor) {
  const GpuSpec& h100 = gpu("H100-SXM5-80GB");
  EXPECT_DOUBLE_EQ(kernel_seconds(memory_kernel(1024), h100), h100.kernel_launch_floor_s);
  Kernel noop;
  noop.kind = KernelKind::launch_only;
  EXPECT_DOUBLE_EQ(kernel_seconds(noop, h100), h100.kernel_launch_floor_s);
  Kernel tiny;
  tiny.kind = KernelKind::gemm;
  tiny.m = tiny.n = tiny.k = 16;
  tiny.dtype = static_cast<std::uint8_t>(Precision::bf16);
  EXPECT_DOUBLE_EQ(kernel_seconds(tiny, h100), h100.kernel_launch_floor_s);
}

// An op of many short kernels is bound by the host: count × host launch interval.
TEST(KernelCost, HostBoundOp) {
  const GpuSpec& a100 = gpu("A100-SXM4-80GB");
  const std::vector<Kernel> tiny(100, memory_kernel(4096));
  EXPECT_DOUBLE_EQ(kernels_seconds(tiny, a100), 100 * a100.host_launch_interval_s);
  // Long kernels: the device time, the host keeps ahead.
  const std::vector<Kernel> big(10, memory_kernel(1e9));
  EXPECT_DOUBLE_EQ(kernels_seconds(big, a100), 10 * kernel_seconds(big[0], a100));
  EXPECT_DOUBLE_EQ(kernels_seconds({}, a100), 0.0);
}

// Flash attention's FLOPs equal the two GEMMs of standard attention (4·b·heads·s²·d); causal
// halves the flash kernel's; its backward is 2.5× the forward (FlashAttention-2's count, which
// includes recomputing Q·Kᵀ); standard attention's backward GEMMs are 2× the forward.
TEST(KernelCost, FlashVersusStandardAttention) {
  engine::KernelTable names;
  TransformerKernelConfig c;
  c.micro_batch = 2;
  c.seq = 4096;
  c.hidden = 4096;
  c.heads = 32;
  c.ffn = 16384;
  c.vocab = 32000;
  c.causal = false;
  auto attention_flops = [&](AttentionImpl impl, Pass pass) {
    c.attention = impl;
    double sum = 0;
    for (const Kernel& k : attention_block_kernels(c, pass, names)) {
      const std::string& n = names.name_of(k.name);
      if (n.rfind("attn.flash", 0) == 0 || n.rfind("attn.qk.", 0) == 0 ||
          n.rfind("attn.pv.", 0) == 0)
        sum += k.flops;
    }
    return sum;
  };
  const double closed = 4.0 * 2 * 32 * 4096.0 * 4096 * 128;
  EXPECT_DOUBLE_EQ(attention_flops(AttentionImpl::flash, Pass::forward), closed);
  EXPECT_DOUBLE_EQ(attention_flops(AttentionImpl::standard, Pass::forward), closed);
  EXPECT_DOUBLE_EQ(attention_flops(AttentionImpl::flash, Pass::backward), 2.5 * closed);
  EXPECT_DOUBLE_EQ(attention_flops(AttentionImpl::standard, Pass::backward), 2.0 * closed);
  c.causal = true;
  EXPECT_DOUBLE_EQ(attention_flops(AttentionImpl::flash, Pass::forward), closed / 2);
  EXPECT_DOUBLE_EQ(attention_flops(AttentionImpl::standard, Pass::forward), closed);

  // Flash is faster: no s² traffic through HBM and half the FLOPs with a causal mask.
  const GpuSpec& a100 = gpu("A100-SXM4-80GB");
  c.attention = AttentionImpl::flash;
  const double flash = kernels_seconds(attention_block_kernels(c, Pass::forward, names), a100);
  c.attention = AttentionImpl::standard;
  const double standard = kernels_seconds(attention_block_kernels(c, Pass::forward, names), a100);
  EXPECT_LT(flash, standard);

  // The flash kernel's time: FLOPs / (peak · efficiency) when its CTAs fill whole waves:
  // b·heads·s/128 = 2·32·32 = 2048 CTAs on 108 SMs is 19 waves, 2048/2052 full.
  const Kernel fa = bf16_attention_kernel(4096, 4096, 128, 64, false, closed);
  const double peak = a100.peak_flops[static_cast<int>(Precision::bf16)];
  EXPECT_NEAR(kernel_seconds(fa, a100),
              closed / (peak * a100.sustained_compute_fraction * a100.attention_fwd_efficiency *
                        (2048.0 / (19 * 108))),
              1e-12);
}

// The flash kernel beside a collective holding 12 SMs: its 2048 CTAs run on 96 SMs, in
// ceil(2048/96) = 22 waves of the same per-SM rate instead of 19: 22/19 of the time. A memory-
// bound kernel keeps its time (HBM, not SMs, bounds it).
TEST(KernelCost, AttentionWavesRunOnTheSmsCommunicationLeaves) {
  const Kernel fa =
      bf16_attention_kernel(4096, 4096, 128, 64, false, 4.0 * 2 * 32 * 4096.0 * 4096 * 128);
  GpuSpec a100 = gpu("A100-SXM4-80GB");
  const double whole = kernel_seconds(fa, a100);
  const double memory_whole = kernel_seconds(memory_kernel(1e9), a100);
  a100.sms_held = 12;
  EXPECT_NEAR(kernel_seconds(fa, a100) / whole, 22.0 / 19.0, 1e-12);
  EXPECT_DOUBLE_EQ(kernel_seconds(memory_kernel(1e9), a100), memory_whole);
}

// A causal attention of one (sequence, head) pair, s = 256 (two 128-row blocks), on the H200:
// CTA 1 steps through 1 block, CTA 2 through 2, each plus its overhead p. The work spread over
// 132 SMs is (1 + p + 2 + p) / 132 block steps; the tail adds t·(2 + p). The counted FLOPs are
// half of 4·256²·128, 2 block steps of 4·128³ FLOP: the factor is 2 / (132 · steps).
TEST(KernelCost, AttentionPerCtaSpreadsItsStepsAndAddsTheLongestCtasTail) {
  const GpuSpec& h200 = gpu("H200-SXM-141GB");
  ASSERT_GT(h200.attention_tail_share, 0);
  const double flops = 4.0 * 256 * 256 * 128 / 2;
  Kernel fa = bf16_attention_kernel(256, 256, 128, 1, true, flops);
  const double p = h200.attention_cta_overhead_fwd, t = h200.attention_tail_share;
  const double steps = (3 + 2 * p) / 132 + t * (2 + p);
  const double factor = 2.0 / (132 * steps);
  const double peak = h200.peak_flops[static_cast<int>(Precision::bf16)];
  const double compute =
      flops / (peak * h200.sustained_compute_fraction * h200.attention_fwd_efficiency * factor);
  EXPECT_NEAR(kernel_seconds(fa, h200), std::max(compute, h200.kernel_launch_floor_s), 1e-15);
  // Backward: the same steps with the backward overhead, 2.5 times the FLOPs.
  fa.kind = KernelKind::attention_bwd;
  fa.flops = 2.5 * flops;
  const double pb = h200.attention_cta_overhead_bwd;
  const double factor_bwd = 2.0 / (132 * ((3 + 2 * pb) / 132 + t * (2 + pb)));
  EXPECT_NEAR(kernel_seconds(fa, h200),
              std::max(2.5 * flops /
                           (peak * h200.sustained_compute_fraction * h200.attention_bwd_efficiency *
                            factor_bwd),
                       h200.kernel_launch_floor_s),
              1e-15);
}

// An attention of no queries costs its launch floor, not a NaN (the per-CTA factor of nothing).
TEST(KernelCost, AnEmptyAttentionCostsItsLaunchFloor) {
  const GpuSpec& h200 = gpu("H200-SXM-141GB");
  const Kernel fa = bf16_attention_kernel(0, 4096, 128, 1, true, 0.0);
  EXPECT_DOUBLE_EQ(kernel_seconds(fa, h200), h200.kernel_launch_floor_s);
}

// cuDNN's fused attention measured on an H200 (validation/hardware/h200-2026-12-04/kernels.json,
// causal bf16, head dimension 128, TFLOP/s counting half of 4·b·h·s²·d forward, 2.5 times that
// backward): the isolated model (sustained share 1) within 5 % of each.
TEST(KernelCost, AttentionPerCtaMatchesTheH200Measurements) {
  struct Measured {
    int batch, heads, seq;
    double fwd_tflops, bwd_tflops;
  };
  const Measured measured[] = {
      {1, 32, 8192, 621, 529}, {1, 16, 8192, 578, 500}, {1, 8, 8192, 498, 448},
      {1, 16, 8192, 579, 501}, {1, 32, 4096, 542, 458}, {1, 16, 4096, 454, 384},
      {1, 24, 2048, 371, 299}, {2, 12, 2048, 375, 287}, {4, 20, 2048, 498, 392},
  };
  GpuSpec h200 = gpu("H200-SXM-141GB");
  h200.sustained_compute_fraction = 1.0;
  for (const Measured& x : measured) {
    const auto seq = static_cast<std::uint64_t>(x.seq);
    const double flops = 4.0 * x.batch * x.heads * x.seq * double(x.seq) * 128 / 2;
    Kernel fa = bf16_attention_kernel(seq, seq, 128, static_cast<std::uint64_t>(x.batch * x.heads),
                                      true, flops);
    EXPECT_NEAR(flops / kernel_seconds(fa, h200) / 1e12 / x.fwd_tflops, 1.0, 0.05)
        << x.batch << " x " << x.heads << " x " << x.seq << " forward";
    fa.kind = KernelKind::attention_bwd;
    fa.flops = 2.5 * flops;
    EXPECT_NEAR(2.5 * flops / kernel_seconds(fa, h200) / 1e12 / x.bwd_tflops, 1.0, 0.05)
        << x.batch << " x " << x.heads << " x " << x.seq << " backward";
  }
}

// Two decoder layers timed on an H200 through eager PyTorch (validation/hardware/h200-2026-12-04,
// kernels.json "layers": RMSNorm, fused QKV, kv heads expanded, SDPA (cuDNN), SwiGLU as silu and
// a product, residual adds; no rotary embedding, bias or dropout), forward and forward +
// backward: the model's kernel lists for the same layer as eager code, isolated (sustained
// share 1), within 10 % of each.
TEST(KernelCost, AnEagerDecoderLayerIsWithinTenPercentOfTheH200Measurement) {
  struct Layer {
    long seq, hidden, ffn;
    int heads, kv_heads;
    double forward_s, forward_backward_s;
  };
  const Layer layers[] = {{4096, 4096, 11008, 32, 32, 2.646e-3, 8.907e-3},
                          {8192, 4096, 14336, 32, 8, 6.397e-3, 21.018e-3}};
  GpuSpec h200 = gpu("H200-SXM-141GB");
  h200.sustained_compute_fraction = 1.0;
  for (const Layer& l : layers) {
    TransformerKernelConfig c;
    c.micro_batch = 1;
    c.seq = l.seq;
    c.hidden = l.hidden;
    c.heads = l.heads;
    c.kv_heads = l.kv_heads;
    c.ffn = l.ffn;
    c.vocab = 32000;
    c.activation = Activation::swiglu;
    c.norm = Norm::rmsnorm;
    c.bias = false;
    c.learned_positions = true;  // no rotary kernels in the measured layer
    c.dropout = false;
    c.fused_kernels = false;
    engine::KernelTable names;
    const double forward =
        kernels_seconds(transformer_layer_kernels(c, Pass::forward, names), h200);
    const double backward =
        kernels_seconds(transformer_layer_kernels(c, Pass::backward, names), h200);
    // Modelled on 4 Dec 2026: 2.821 and 8.544 ms (s = 4096), 6.427 and 19.643 ms (s = 8192).
    EXPECT_NEAR(forward / l.forward_s, 1.0, 0.10) << l.seq << ": forward " << forward;
    EXPECT_NEAR((forward + backward) / l.forward_backward_s, 1.0, 0.10)
        << l.seq << ": forward + backward " << forward + backward;
  }
}

TEST(KernelCost, MissingFiguresNameTheGpu) {
  Kernel fa = bf16_attention_kernel(1024, 1024, 64, 1, false, 0.0);
  try {
    kernel_seconds(fa, gpu("cpu"));
    FAIL() << "cpu has no kernel figures";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("'cpu'"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("kernel_launch_floor_s"), std::string::npos) << e.what();
  }
  fa.dtype = static_cast<std::uint8_t>(Precision::fp8);
  try {
    kernel_seconds(fa, gpu("A100-SXM4-80GB"));
    FAIL() << "A100 has no fp8";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("fp8 peak"), std::string::npos) << e.what();
  }
  fa.dtype = 99;
  EXPECT_THROW(kernel_seconds(fa, gpu("A100-SXM4-80GB")), std::invalid_argument);
}

TEST(KernelTable, IdenticalListsShareOneIndex) {
  engine::KernelTable table;
  TransformerKernelConfig c;
  c.micro_batch = 1;
  c.seq = 2048;
  c.hidden = 12288;
  c.heads = 96;
  c.ffn = 4 * 12288;
  c.vocab = 51200;
  c.tp = 8;
  std::vector<std::uint32_t> fwd, bwd;
  for (int layer = 0; layer < 96; ++layer) {
    fwd.push_back(table.intern(transformer_layer_kernels(c, Pass::forward, table)));
    bwd.push_back(table.intern(transformer_layer_kernels(c, Pass::backward, table)));
  }
  EXPECT_EQ(table.size(), 2u);  // 96 layers, forward and backward: two lists
  for (int layer = 0; layer < 96; ++layer) {
    EXPECT_EQ(fwd[layer], fwd[0]);
    EXPECT_EQ(bwd[layer], bwd[0]);
  }
  EXPECT_NE(fwd[0], bwd[0]);
  c.micro_batch = 2;  // another shape: another list
  EXPECT_EQ(table.intern(transformer_layer_kernels(c, Pass::forward, table)), 2u);
  const auto list = table.list(fwd[0]);
  EXPECT_EQ(table.name_of(list.front().name), "attn.norm.fwd");
  EXPECT_EQ(table.kernel_count(), 2 * list.size() + table.list(1).size());
  EXPECT_THROW(table.list(7), std::out_of_range);
  // The empty list is a list too.
  const auto empty = table.intern({});
  EXPECT_EQ(table.intern({}), empty);
  EXPECT_TRUE(table.list(empty).empty());

  // Costs per distinct list, once.
  const auto costs = kernel_list_seconds(table, gpu("A100-SXM4-80GB"));
  ASSERT_EQ(costs.size(), table.size());
  EXPECT_GT(costs[bwd[0]], costs[fwd[0]]);
  EXPECT_DOUBLE_EQ(costs[empty], 0.0);
}

}  // namespace
}  // namespace clustersim::models::kernels
