// The execution record (calibrate/execution.hpp) and the CPU executor's compute side
// (calibrate/host_work.hpp), without MPI: a measured timeline's launch times follow the matching
// rule, and the executed work is the op's, to the tile.
#include <gtest/gtest.h>

#include "calibrate/execution.hpp"
#include "calibrate/host_work.hpp"

namespace clustersim::calibrate {
namespace {

using engine::OpId;
using engine::ScheduleBuilder;

// Rank 0: compute, then an all-reduce on {0,1}, then a send to rank 1 (tag 5). Rank 1: the
// matching all-reduce and recv.
engine::Schedule two_rank_schedule() {
  ScheduleBuilder b(2);
  const auto g = b.add_group({0, 1}, "dp[0]");
  const auto s = b.stream("compute");
  const OpId a = b.compute({.rank = 0, .stream = s, .name = "a"}, 1e6, 0);
  const OpId deps[] = {a};
  b.collective({.rank = 0, .stream = s, .name = "ar", .deps = deps},
               engine::CollectiveType::all_reduce, g, 1024);
  b.send({.rank = 0, .stream = s, .name = "tx"}, 1, 64, 5);
  b.collective({.rank = 1, .stream = s, .name = "ar"}, engine::CollectiveType::all_reduce, g, 1024);
  b.recv({.rank = 1, .stream = s, .name = "rx"}, 0, 64, 5);
  return std::move(b).finish();
}

TEST(MeasuredTimeline, CommunicationLaunchesWhenTheLastPeerArrives) {
  const engine::Schedule s = two_rank_schedule();
  // ops: 0 a, 1 ar (rank 0), 2 tx, 3 ar (rank 1), 4 rx
  const std::vector<OpTimes> t = {{0.0, 1.0}, {1.0, 3.5}, {3.5, 4.0}, {3.0, 3.5}, {2.0, 4.5}};
  const engine::Timeline tl = measured_timeline(s, t, 7);
  EXPECT_EQ(tl.launch[0], engine::Time::from_seconds(0.0));  // compute: its start
  EXPECT_EQ(tl.launch[1], engine::Time::from_seconds(3.0));  // rank 1 reached it at 3.0
  EXPECT_EQ(tl.launch[3], engine::Time::from_seconds(3.0));
  EXPECT_EQ(tl.launch[2], engine::Time::from_seconds(3.5));  // the send was posted last
  EXPECT_EQ(tl.launch[4], engine::Time::from_seconds(3.5));
  EXPECT_EQ(tl.makespan, engine::Time::from_seconds(4.5));
  EXPECT_EQ(tl.link_bytes.size(), 7u);
}

TEST(MeasuredTimeline, AnEndBeforeItsStartIsClampedAndACountMismatchRefused) {
  const engine::Schedule s = two_rank_schedule();
  std::vector<OpTimes> t = {{0.0, 1.0}, {1.0, 3.5}, {3.5, 4.0}, {3.0, 3.5}, {2.0, 1.5}};
  const engine::Timeline tl = measured_timeline(s, t, 0);
  EXPECT_EQ(tl.end[4], tl.start[4]);
  t.pop_back();
  EXPECT_THROW(measured_timeline(s, t, 0), std::invalid_argument);
}

TEST(HostWork, ExecutesTheOpsFlopsInTilesToWithinHalfAStep) {
  ScheduleBuilder b(1);
  const auto s = b.stream("compute");
  b.compute({.rank = 0, .stream = s, .name = "gemm"}, 1e8, 0);
  b.copy({.rank = 0, .stream = s, .name = "copy"}, 10'000'000);
  const engine::Schedule sched = std::move(b).finish();
  HostWork work;
  int slices = 0;
  work.run(sched, sched.ops[0], [&] { ++slices; });
  // 1e8 FLOPs: two full 256³ tiles (2·256³ = 33,554,432 each), then 2·256·256·k with
  // k = round(32,891,136 / 131,072) = 251.
  EXPECT_DOUBLE_EQ(work.flops_done(), 2 * 33554432.0 + 131072.0 * 251);
  EXPECT_EQ(slices, 3);
  work.run(sched, sched.ops[1], [] {});
  EXPECT_DOUBLE_EQ(work.bytes_done(), 10'000'000.0);  // read + written, as the op counts them
}

TEST(HostWork, WorkScaleMultipliesWhatRuns) {
  ScheduleBuilder b(1);
  const auto s = b.stream("compute");
  b.compute({.rank = 0, .stream = s, .name = "optimizer"}, 0.0, 8'000'000);
  const engine::Schedule sched = std::move(b).finish();
  HostWork work(0.25);
  work.run(sched, sched.ops[0], [] {});
  // No FLOPs: the op's bytes move as copies; a quarter of 8 MB.
  EXPECT_DOUBLE_EQ(work.bytes_done(), 2'000'000.0);
  EXPECT_DOUBLE_EQ(work.flops_done(), 0.0);
}

}  // namespace
}  // namespace clustersim::calibrate
