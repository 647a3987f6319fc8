// Cost of the kernel-level compute model (models/kernels/).
//   BM_Gpt3LayerKernelCost: time to cost one GPT-3 175B layer's forward + backward kernel lists
//     (TP 8, micro-batch 1, s = 2048) on A100: what the compute model pays per distinct op shape.
//   BM_Gpt3LayerKernelLists: time to build and intern those two lists.
//   BM_Gpt3ModelKernelTable: 96 layers × (forward, backward) interned and costed: identical
//     layers share one list, so the cost is paid once per distinct shape, not per op.
#include <benchmark/benchmark.h>

#include "engine/kernels.hpp"
#include "models/hardware.hpp"
#include "models/kernels/kernel_cost.hpp"
#include "models/kernels/transformer_kernels.hpp"

namespace {

using namespace clustersim;
using namespace clustersim::models::kernels;

TransformerKernelConfig gpt3_tp8() {
  TransformerKernelConfig c;
  c.micro_batch = 1;
  c.seq = 2048;
  c.hidden = 12288;
  c.heads = 96;
  c.ffn = 4 * 12288;
  c.vocab = 51200;
  c.tp = 8;
  return c;
}

void BM_Gpt3LayerKernelCost(benchmark::State& state) {
  engine::KernelTable table;
  const auto fwd = transformer_layer_kernels(gpt3_tp8(), Pass::forward, table);
  const auto bwd = transformer_layer_kernels(gpt3_tp8(), Pass::backward, table);
  const models::GpuSpec& a100 = *models::find_gpu("A100-SXM4-80GB");
  for (auto _ : state) {
    const double t = kernels_seconds(fwd, a100) + kernels_seconds(bwd, a100);
    benchmark::DoNotOptimize(t);
  }
  const double kernels = static_cast<double>(fwd.size() + bwd.size());
  state.counters["kernels"] = kernels;
  state.counters["ns_per_kernel"] =
      benchmark::Counter(kernels * static_cast<double>(state.iterations()),
                         benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}
BENCHMARK(BM_Gpt3LayerKernelCost)->Unit(benchmark::kMicrosecond);

void BM_Gpt3LayerKernelLists(benchmark::State& state) {
  engine::KernelTable table;
  for (auto _ : state) {
    const auto f = table.intern(transformer_layer_kernels(gpt3_tp8(), Pass::forward, table));
    const auto b = table.intern(transformer_layer_kernels(gpt3_tp8(), Pass::backward, table));
    benchmark::DoNotOptimize(f + b);
  }
  state.counters["lists"] = static_cast<double>(table.size());
}
BENCHMARK(BM_Gpt3LayerKernelLists)->Unit(benchmark::kMicrosecond);

void BM_Gpt3ModelKernelTable(benchmark::State& state) {
  const models::GpuSpec& a100 = *models::find_gpu("A100-SXM4-80GB");
  std::size_t lists = 0;
  for (auto _ : state) {
    engine::KernelTable table;
    for (int layer = 0; layer < 96; ++layer) {
      table.intern(transformer_layer_kernels(gpt3_tp8(), Pass::forward, table));
      table.intern(transformer_layer_kernels(gpt3_tp8(), Pass::backward, table));
    }
    const auto costs = kernel_list_seconds(table, a100);
    lists = costs.size();
    benchmark::DoNotOptimize(costs.data());
  }
  state.counters["lists"] = static_cast<double>(lists);
}
BENCHMARK(BM_Gpt3ModelKernelTable)->Unit(benchmark::kMillisecond);

}  // namespace
