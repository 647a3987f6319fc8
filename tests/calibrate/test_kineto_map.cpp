// A Kineto (PyTorch profiler) trace fixture mapped onto a plan (calibrate/kineto_map.hpp):
// tests/data/execution/kineto_ddp2_rank0.json is rank 0 of ddp2.yaml written from Kineto's
// documented format, with kernels whose times are round numbers so every figure below is read off
// the file: 16 layer kernels (forward 60 µs, backward 120 µs) from ts 1000 µs, two NCCL all-reduces
// of 150 µs at 2200 and 2440 µs, four optimizer kernels of 30 µs from 2590 µs, and one stray NCCL
// broadcast at 2800 µs that no op of the plan stands for.
#include <gtest/gtest.h>

#include <fstream>

#include "calibrate/kineto_map.hpp"
#include "models/frontend.hpp"

namespace clustersim::calibrate {
namespace {

using json = nlohmann::ordered_json;
const std::string kDir = std::string(CLUSTERSIM_TEST_DATA) + "/execution/";

json fixture() {
  std::ifstream in(kDir + "kineto_ddp2_rank0.json");
  return json::parse(in);
}

models::Prediction plan() {
  models::RunRequest r;
  r.scenario = kDir + "ddp2.yaml";
  return models::predict(r);
}

TEST(KinetoMap, KernelsMapOntoTheRanksOpsByNameStreamAndOrder) {
  const models::Prediction p = plan();
  const auto& s = p.output.built.schedule;
  const json trace = fixture();
  ASSERT_TRUE(is_kineto_trace(trace));
  const KinetoMapping m = map_kineto_trace(s, trace, "k.json");
  EXPECT_EQ(m.rank, 0u);
  EXPECT_TRUE(m.unmapped_ops.empty());
  ASSERT_EQ(m.unmapped_kernels.size(), 1u);
  EXPECT_EQ(m.unmapped_kernels[0].rfind("ncclDevKernel_Broadcast", 0), 0u);
  EXPECT_NEAR(m.span_s, 1810e-6, 1e-12);  // 1000 µs to 2810 µs
  // Find ops by label: the schedule's ids are not the fixture's business.
  auto times = [&](const std::string& label) {
    for (engine::OpId id = 0; id < s.ops.size(); ++id)
      if (s.ops[id].rank == 0 && s.label(s.ops[id]) == label) return m.ops[id];
    ADD_FAILURE() << "no op " << label;
    return std::optional<OpTimes>{};
  };
  const auto fwd = times("block[0] fwd mb0");
  ASSERT_TRUE(fwd);
  EXPECT_NEAR(fwd->start_s, 0.0, 1e-12);
  EXPECT_NEAR(fwd->end_s, 60e-6, 1e-12);
  const auto bucket0 = times("ddp bucket 0 all_reduce");
  ASSERT_TRUE(bucket0);
  EXPECT_NEAR(bucket0->start_s, 1200e-6, 1e-12);
  EXPECT_NEAR(bucket0->end_s, 1350e-6, 1e-12);
  const auto optimizer = times("optimizer step");  // four kernels: 1590 to 1710 µs
  ASSERT_TRUE(optimizer);
  EXPECT_NEAR(optimizer->start_s, 1590e-6, 1e-12);
  EXPECT_NEAR(optimizer->end_s, 1710e-6, 1e-12);

  const Comparison c = compare_kineto(s, p.output.timeline, "exec-ddp2", m);
  EXPECT_NEAR(c.iteration.measured_s, 1810e-6, 1e-12);
  EXPECT_EQ(c.ops_compared, 19u);
  bool dp = false;
  for (const Figure& f : c.categories) {
    if (f.name != "dp-comm") continue;
    dp = true;
    EXPECT_NEAR(f.measured_s, 300e-6, 1e-12);  // two all-reduces of 150 µs
  }
  EXPECT_TRUE(dp);
}

TEST(KinetoMap, ATraceOfAnotherRankOrWithoutKernelsIsRefused) {
  const models::Prediction p = plan();
  json other = fixture();
  other["distributedInfo"]["rank"] = 5;
  EXPECT_THROW(map_kineto_trace(p.output.built.schedule, other, "k.json"), CompareError);
  json empty = fixture();
  empty["traceEvents"] = json::array();
  EXPECT_THROW(map_kineto_trace(p.output.built.schedule, empty, "k.json"), CompareError);
}

}  // namespace
}  // namespace clustersim::calibrate
