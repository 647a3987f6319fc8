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

// Megatron-LM's README, "Distributed optimizer": with bf16 parameters and fp32 gradients a
// parameter costs 18 bytes without the distributed optimizer and 6 + 12/d with it (the fp32 main
// gradients are the model's gradients, so they are not distributed: our zero1).
TEST(DataParallelStrategy, Fp32GradientsGiveMegatronsBytesPerParameter) {
  for (auto [kind, bytes] :
       {std::pair{DataParallel::ddp, 18.0}, std::pair{DataParallel::zero1, 6.0 + 12.0 / 8}}) {
    Plan plan(kind, 8);
    plan.parallel.gradient_as_bucket_view = true;  // Megatron's buffer: no bucket copy
    plan.training.grad_reduce_dtype = Precision::fp32;
    const PlanContext ctx = plan.context();
    const TensorParallelism tp(ctx);
    const auto m = make_data_parallel(kind, ctx, tp, nullptr)->memory(0);
    EXPECT_DOUBLE_EQ(m.weights + m.gradients + m.optimizer, bytes * kPsi);
    EXPECT_DOUBLE_EQ(m.gradients, 4 * kPsi);
  }
}

// DDP on rank 0, fed eight backward ops by hand (layers 7..0): the bytes of its all-reduces, the
// size of their group and the parameters its optimizer steps.
struct DdpRun {
  std::vector<std::uint64_t> bytes;
  std::size_t group_ranks = 0;
  double optimizer_params = 0;
};
DdpRun run_ddp_on_rank0(const Plan& plan) {
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
  DdpRun run;
  const auto& s = builder.peek();
  for (const engine::OpId id : ddp->gradient_ops()) {
    run.bytes.push_back(s.ops[id].bytes);
    run.group_ranks = s.groups[s.ops[id].group_or_peer].ranks.size();
  }
  run.optimizer_params = ddp->optimizer_params();
  return run;
}

// Two buckets: the first closes past 1 MiB, which layer 7's 2 MB bf16 gradient alone passes; the
// rest fill the second; over the 8-rank dp group.
TEST(DataParallelStrategy, DdpEmitsOneAllReducePerBucketWithoutAScenario) {
  const DdpRun run = run_ddp_on_rank0(Plan(DataParallel::ddp, 8));
  EXPECT_EQ(run.bytes, (std::vector<std::uint64_t>{2'000'000u, 14'000'000u}));
  EXPECT_EQ(run.group_ranks, 8u);
  EXPECT_DOUBLE_EQ(run.optimizer_params, kPsi);
}

// The same with gradients reduced in fp32: every layer's gradient is 4 MB, so the 1 MiB first
// bucket still closes after layer 7 and each all-reduce carries twice the bf16 bytes.
TEST(DataParallelStrategy, DdpReducesInTheGradientDtype) {
  Plan plan(DataParallel::ddp, 8);
  plan.training.grad_reduce_dtype = Precision::fp32;
  EXPECT_EQ(run_ddp_on_rank0(plan).bytes, (std::vector<std::uint64_t>{4'000'000u, 28'000'000u}));
}

}  // namespace
}  // namespace clustersim::models
