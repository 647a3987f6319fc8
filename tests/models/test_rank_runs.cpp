// Where each rank's ops lie (models/rank_runs.hpp): a rank's ops are those a scan of every op
// would find, in id order, whether the ranks come in long runs (as plans build them), in runs
// that start again (a second iteration), or alternate op by op (too many runs: the fallback).
#include <gtest/gtest.h>

#include <vector>

#include "engine/schedule.hpp"
#include "models/rank_runs.hpp"

namespace {

using namespace clustersim;

engine::Schedule schedule_of_ranks(const std::vector<engine::Rank>& ranks, std::uint32_t world) {
  engine::ScheduleBuilder b(world);
  const auto s = b.stream("compute");
  for (const engine::Rank r : ranks)
    b.compute({r, s, engine::Category::forward, "f"}, 1.0, 0);
  return std::move(b).finish();
}

std::vector<engine::OpId> runs_of(const engine::Schedule& s, engine::Rank rank) {
  models::RankRuns runs(s.ops.size());
  for (engine::OpId id = 0; id < s.ops.size(); ++id)
    runs.add(id, s.ops[id].rank);
  return runs.ops_of(s, rank);
}

TEST(RankRuns, ARanksOpsAreItsRunsInIdOrder) {
  // Rank 0's ops are 0-2 and 7-8 (a second iteration), rank 1's 3-4, rank 2's 5-6.
  const auto s = schedule_of_ranks({0, 0, 0, 1, 1, 2, 2, 0, 0}, 4);
  EXPECT_EQ(runs_of(s, 0), (std::vector<engine::OpId>{0, 1, 2, 7, 8}));
  EXPECT_EQ(runs_of(s, 1), (std::vector<engine::OpId>{3, 4}));
  EXPECT_EQ(runs_of(s, 2), (std::vector<engine::OpId>{5, 6}));
  EXPECT_TRUE(runs_of(s, 3).empty());
}

// Ranges added at once (a stamped run, models/metrics.cpp) list as their ops added one by one,
// joined to a run of the same rank that ends where they begin.
TEST(RankRuns, RangesListAsTheirOpsOneByOne) {
  const auto s = schedule_of_ranks({0, 0, 0, 1, 1, 1, 0, 0, 0}, 2);
  models::RankRuns runs(s.ops.size());
  runs.add(0, 3, 0);
  runs.add(3, 5, 1);
  runs.add(5, 1);  // joins [3, 5)
  runs.add(6, 9, 0);
  EXPECT_EQ(runs.ops_of(s, 0), (std::vector<engine::OpId>{0, 1, 2, 6, 7, 8}));
  EXPECT_EQ(runs.ops_of(s, 1), (std::vector<engine::OpId>{3, 4, 5}));
}

TEST(RankRuns, RanksThatAlternateOpByOpAreFoundByAScan) {
  // 2,000 ops of two ranks alternating: 2,000 runs, more than 2,000 / kOpsPerRun + 64 = 189.
  std::vector<engine::Rank> ranks;
  for (int i = 0; i < 2000; ++i)
    ranks.push_back(static_cast<engine::Rank>(i % 2));
  const auto s = schedule_of_ranks(ranks, 2);
  std::vector<engine::OpId> odd;
  for (engine::OpId id = 1; id < 2000; id += 2)
    odd.push_back(id);
  EXPECT_EQ(runs_of(s, 1), odd);
  EXPECT_EQ(runs_of(s, 0).size(), 1000u);
  EXPECT_EQ(runs_of(s, 0).front(), 0u);
}

}  // namespace
