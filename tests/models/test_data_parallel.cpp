// Data-parallel strategies used directly, without a scenario file (models/plans/data_parallel.hpp):
// a plan is testable from a PlanContext alone. Figures: the ZeRO paper's model-state formulas
// (Rajbhandari et al. 2020, §3: with mixed-precision Adam, K = 12, DDP holds (2 + 2 + K)Ψ and
// stage 3 (2 + 2 + K)Ψ/N), and PyTorch DDP's bucket rule.
#include <gtest/gtest.h>

#include "models/model_costs.hpp"
#include "models/plans/data_parallel.hpp"
#include "models/plans/stage_partition.hpp"
#include "models/plans/tensor_parallelism.hpp"

namespace clustersim::models {
namespace {

struct Plan {
  explicit Plan(DataParallel kind, int dp) {
    parallel.dp = dp;
    parallel.data_parallel = kind;
    parallel.bucket_bytes = 1e12;  // one bucket after the 1 MiB first one
    training.global_batch = dp;
    training.precision = Precision::bf16;
    // Ψ = 8 layers of 1e6 parameters.
    layers = expand_model(
        ModelSpec{"list", std::vector<LayerSpec>{{"block", 1e6, 1e9, -1, 0, 8}}, 0, {}}, 0);
    chunks = partition_layers(parallel, layers);
  }
  PlanContext context() const {
    return {layers, chunks, layout, parallel, training, nullptr, 8, 1};
  }
  ParallelConfig parallel;
  TrainingConfig training;
  std::vector<LayerCost> layers;
  std::vector<std::vector<int>> chunks;
  RankLayout layout{1, 1, 8, 1, {"tp", "ep", "dp", "pp"}};
};

constexpr double kPsi = 8e6;

TEST(DataParallelStrategy, DdpHoldsFullModelStatesAndABucketCopy) {
  const Plan plan(DataParallel::ddp, 8);
  const PlanContext ctx = plan.context();
  const TensorParallelism tp(ctx);
  const auto m = make_data_parallel(DataParallel::ddp, ctx, tp, nullptr)->memory(0);
  EXPECT_DOUBLE_EQ(m.weights, 2 * kPsi);
  EXPECT_DOUBLE_EQ(m.gradients, 2 * kPsi);
  EXPECT_DOUBLE_EQ(m.optimizer, 12 * kPsi);
  EXPECT_DOUBLE_EQ(m.buffers, 2 * kPsi);
}

TEST(DataParallelStrategy, ZeroStagesPartitionAsThePaperSays) {
  for (auto [kind, weights, gradients] :
       {std::tuple{DataParallel::zero1, 2 * kPsi, 2 * kPsi},
        std::tuple{DataParallel::zero2, 2 * kPsi, 2 * kPsi / 8},
        std::tuple{DataParallel::zero3, 2 * kPsi / 8, 2 * kPsi / 8}}) {
    const Plan plan(kind, 8);
    const PlanContext ctx = plan.context();
    const TensorParallelism tp(ctx);
    const auto m = make_data_parallel(kind, ctx, tp, nullptr)->memory(0);
    EXPECT_DOUBLE_EQ(m.weights, weights);
    EXPECT_DOUBLE_EQ(m.gradients, gradients);
    EXPECT_DOUBLE_EQ(m.optimizer, 12 * kPsi / 8);
  }
}

// DDP on rank 0, fed eight backward ops by hand: two buckets (the first closes past 1 MiB, which
// layer 7's 2 MB bf16 gradient alone passes; the rest fill the second), over the 8-rank dp group.
TEST(DataParallelStrategy, DdpEmitsOneAllReducePerBucketWithoutAScenario) {
  const Plan plan(DataParallel::ddp, 8);
  const PlanContext ctx = plan.context();
  const TensorParallelism tp(ctx);
  engine::ScheduleBuilder builder(8);
  ProcessGroups groups(builder);
  ScheduleSink sink{builder, groups};
  auto ddp = make_data_parallel(DataParallel::ddp, ctx, tp, &sink);
  const auto compute = builder.stream("compute");
  ddp->begin_rank(0, engine::kNone);
  for (int l = 7; l >= 0; --l) {
    const engine::OpId op =
        builder.compute({0, compute, engine::Category::backward, "bwd", 0, {}}, 1e9, 0);
    ddp->after_layer(0, l, false, 0, op, op);
  }
  const auto reduces = ddp->gradient_ops();
  ASSERT_EQ(reduces.size(), 2u);  // the 1 MiB first bucket (layer 7), then layers 6..0
  const auto& s = builder.peek();
  EXPECT_EQ(s.ops[reduces[0]].bytes, 2'000'000u);
  EXPECT_EQ(s.ops[reduces[1]].bytes, 14'000'000u);
  EXPECT_EQ(s.groups[s.ops[reduces[0]].group_or_peer].ranks.size(), 8u);
  EXPECT_DOUBLE_EQ(ddp->optimizer_params(), kPsi);
}

}  // namespace
}  // namespace clustersim::models
