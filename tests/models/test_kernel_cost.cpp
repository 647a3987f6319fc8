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
  Kernel fa;
  fa.kind = KernelKind::attention_fwd;
  fa.m = fa.n = 4096;
  fa.k = 128;
  fa.batch = 64;
  fa.flops = closed;
  fa.dtype = static_cast<std::uint8_t>(Precision::bf16);
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
  Kernel fa;
  fa.kind = KernelKind::attention_fwd;
  fa.m = fa.n = 4096;
  fa.k = 128;
  fa.batch = 64;
  fa.flops = 4.0 * 2 * 32 * 4096.0 * 4096 * 128;
  fa.dtype = static_cast<std::uint8_t>(Precision::bf16);
  GpuSpec a100 = gpu("A100-SXM4-80GB");
  const double whole = kernel_seconds(fa, a100);
  const double memory_whole = kernel_seconds(memory_kernel(1e9), a100);
  a100.sms_held = 12;
  EXPECT_NEAR(kernel_seconds(fa, a100) / whole, 22.0 / 19.0, 1e-12);
  EXPECT_DOUBLE_EQ(kernel_seconds(memory_kernel(1e9), a100), memory_whole);
}

TEST(KernelCost, MissingFiguresNameTheGpu) {
  Kernel fa;
  fa.kind = KernelKind::attention_fwd;
  fa.m = fa.n = 1024;
  fa.k = 64;
  fa.dtype = static_cast<std::uint8_t>(Precision::bf16);
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
