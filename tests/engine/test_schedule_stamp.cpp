// ScheduleBuilder::stamp: a copy of one rank's ops issued by another rank, with its rank,
// groups, peers and dependencies mapped; every other field as the original's.
#include <gtest/gtest.h>

#include <stdexcept>
#include <vector>

#include "engine/schedule.hpp"

namespace clustersim::engine {
namespace {

// Rank 0 runs x (compute), an all-gather on group {0, 1} after it and a send to rank 1 after
// that; rank 1 receives. Stamped onto rank 2 with group {2, 3} and peer + 2.
struct StampedRanks {
  ScheduleBuilder b{4};
  StreamId s0 = b.stream("compute");
  StreamId s1 = b.stream("pp");
  GroupId g01 = b.add_group({0, 1}, "a[0]");
  GroupId g23 = b.add_group({2, 3}, "a[1]");
  OpId x = b.compute({0, s0, Category::forward, "x", 3, {}, 2}, 5.0, 7);
  OpId x_deps[1] = {x};
  OpId gather = b.collective({0, s0, Category::tp_comm, "gather", 3, x_deps},
                             CollectiveType::all_gather, g01, 100, Algorithm::ring, 1);
  OpId gather_deps[1] = {gather};
  OpId send = b.send({0, s1, Category::pp_comm, "send", 3, gather_deps}, 1, 9, 4);
  OpId recv = b.recv({1, s1, Category::pp_comm, "recv", 3}, 0, 9, 4);

  ScheduleBuilder::StampMap onto_rank2() {
    ScheduleBuilder::StampMap m;
    m.rank = 2;
    m.group = [this](GroupId g) { return g == g01 ? g23 : kNone; };
    m.peer = [](Rank p) { return p + 2; };
    m.earlier = [](OpId) { return kNone; };
    return m;
  }
};

TEST(ScheduleStamp, CopiesEveryFieldButTheRankGroupPeerAndDependencies) {
  StampedRanks t;
  const OpId first = t.b.stamp(t.x, t.send + 1, t.onto_rank2());
  EXPECT_EQ(first, 4u);  // after rank 0's three ops and rank 1's one
  const Schedule s = std::move(t.b).finish();
  ASSERT_EQ(s.ops.size(), 7u);
  const Op& x = s.ops[4];
  EXPECT_EQ(x.rank, 2u);
  EXPECT_EQ(x.kind, OpKind::compute);
  EXPECT_EQ(s.flops(x), 5.0);
  EXPECT_EQ(x.bytes, 7u);
  EXPECT_EQ(x.microbatch(), 3u);
  EXPECT_EQ(x.chunk(), 2u);
  EXPECT_EQ(s.name_of(x), "x");
  EXPECT_EQ(x.kernels, kNone);
  EXPECT_EQ(x.deps_count, 0u);
  const Op& gather = s.ops[5];
  EXPECT_EQ(gather.rank, 2u);
  EXPECT_EQ(gather.group_or_peer, 1u);  // {2, 3}
  EXPECT_EQ(gather.collective, CollectiveType::all_gather);
  EXPECT_EQ(gather.algorithm, Algorithm::ring);
  EXPECT_EQ(gather.tag(), 1u);  // the root's index stays
  EXPECT_EQ(gather.bytes, 100u);
  EXPECT_EQ(gather.category, Category::tp_comm);
  EXPECT_EQ(std::vector<OpId>(s.dependencies(gather).begin(), s.dependencies(gather).end()),
            std::vector<OpId>{4});
  const Op& send = s.ops[6];
  EXPECT_EQ(send.kind, OpKind::send);
  EXPECT_EQ(send.group_or_peer, 3u);
  EXPECT_EQ(send.tag(), 4u);
  EXPECT_EQ(send.stream, 1u);
  EXPECT_EQ(std::vector<OpId>(s.dependencies(send).begin(), s.dependencies(send).end()),
            std::vector<OpId>{5});
  // The originals are untouched.
  EXPECT_EQ(s.ops[1].group_or_peer, 0u);
  EXPECT_EQ(s.ops[2].group_or_peer, 1u);
  // The copies are read through the originals' records, not held again.
  EXPECT_EQ(s.ops.records(), 4u);
}

// A copy of copies (rank 2's stamped ops onto rank 3) cannot read through one run of records:
// it is held as records, and reads the same as a copy of the originals would.
TEST(ScheduleStamp, ACopyOfCopiesIsHeldAsRecordsAndReadsTheSame) {
  StampedRanks t;
  const OpId first = t.b.stamp(t.x, t.send + 1, t.onto_rank2());
  auto onto_rank3 = t.onto_rank2();
  onto_rank3.rank = 3;
  onto_rank3.group = [&t](GroupId g) { return g == t.g23 ? t.g23 : kNone; };
  onto_rank3.peer = [](Rank p) { return p == 3 ? Rank{1} : kNone; };
  const OpId again = t.b.stamp(first, first + 3, onto_rank3);
  const Schedule s = std::move(t.b).finish();
  ASSERT_EQ(s.ops.size(), 10u);
  EXPECT_EQ(s.ops.records(), 7u);  // rank 0's 3, rank 1's 1, rank 3's 3
  EXPECT_EQ(s.ops[again].rank, 3u);
  EXPECT_EQ(s.flops(s.ops[again]), 5.0);
  EXPECT_EQ(s.ops[again + 1].group_or_peer, t.g23);
  EXPECT_EQ(s.ops[again + 2].group_or_peer, 1u);
  EXPECT_EQ(std::vector<OpId>(s.dependencies(s.ops[again + 2]).begin(),
                              s.dependencies(s.ops[again + 2]).end()),
            std::vector<OpId>{again + 1});
}

// A copied op that depends on an op before the copied range (an earlier iteration) depends on
// what `earlier` names: an earlier op of the stamped rank.
TEST(ScheduleStamp, DependenciesBeforeTheRangeMapThroughEarlier) {
  StampedRanks t;
  t.b.stamp(t.x, t.send + 1, t.onto_rank2());  // rank 2's first block: ops 4, 5, 6
  const OpId after_send[] = {t.send};
  const OpId next = t.b.compute({0, t.s0, Category::optimizer, "step", kNone, after_send}, 1, 0);
  auto m = t.onto_rank2();
  m.earlier = [](OpId op) { return op == 2 ? OpId{6} : kNone; };
  const OpId copy = t.b.stamp(next, next + 1, m);
  const Schedule s = std::move(t.b).finish();
  EXPECT_EQ(
      std::vector<OpId>(s.dependencies(s.ops[copy]).begin(), s.dependencies(s.ops[copy]).end()),
      std::vector<OpId>{6});
}

TEST(ScheduleStamp, RejectsMixedRanksBadMapsAndAddsNothingThen) {
  StampedRanks t;
  EXPECT_THROW(t.b.stamp(t.x, t.recv + 1, t.onto_rank2()), std::invalid_argument);  // two ranks
  auto to_self = t.onto_rank2();
  to_self.peer = [](Rank) { return Rank{2}; };
  EXPECT_THROW(t.b.stamp(t.x, t.send + 1, to_self), std::invalid_argument);
  auto no_group = t.onto_rank2();
  no_group.group = [](GroupId) { return kNone; };
  EXPECT_THROW(t.b.stamp(t.x, t.send + 1, no_group), std::invalid_argument);
  auto other_rank = t.onto_rank2();
  other_rank.rank = 4;
  EXPECT_THROW(t.b.stamp(t.x, t.send + 1, other_rank), std::invalid_argument);
  const OpId after_send[] = {t.send};
  const OpId next = t.b.compute({0, t.s0, Category::optimizer, "step", kNone, after_send}, 1, 0);
  auto wrong_earlier = t.onto_rank2();
  wrong_earlier.earlier = [](OpId) { return OpId{3}; };  // rank 1's recv
  EXPECT_THROW(t.b.stamp(next, next + 1, wrong_earlier), std::invalid_argument);
  EXPECT_EQ(t.b.size(), 5u);  // four ops and `next`
  EXPECT_EQ(t.b.peek().deps.size(), 3u);
}

}  // namespace
}  // namespace clustersim::engine
